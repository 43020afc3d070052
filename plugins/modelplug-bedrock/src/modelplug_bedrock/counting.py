"""Counting before sending: Bedrock's CountTokens, ``POST /model/{modelId}/count-tokens``
with ``{"input": {"converse": {messages, system, toolConfig,
additionalModelRequestFields}}}`` -> ``{"inputTokens": N}`` (botocore's bedrock-runtime
service model), signed as a Converse call is.

Counted is the prompt a Converse call would send; a text alone (``Client.count_tokens``)
is None, as Converse has no bare text. CountTokens serves some models only: a 404, 405
or 501 is None (remembered); another refusal (a model it does not count answers a
ValidationException) is the classified error, None for that call.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from modelplug import ErrorClass, Request, Route, register_secret
from modelplug_kit import StatusError, provider_headers

from .credentials import frozen_credentials, signed_headers
from .errors import ERRORS
from .http import HTTP
from .providers import base_url_for, region_for
from .request import build_body

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["count_body", "count_tokens", "read_input_tokens"]

BEARER_ENV = "AWS_BEARER_TOKEN_BEDROCK"  # as modelplug_bedrock.BEARER_ENV
# The parts of a Converse body a ConverseTokensRequest takes.
COUNTED_FIELDS = ("messages", "system", "toolConfig", "additionalModelRequestFields")
NO_ENDPOINT = frozenset({404, 405, 501})


class CountReplyError(ValueError):
    """A CountTokens answer that holds no count."""


def count_body(request: Request, route: Route) -> dict[str, Any]:
    """The CountTokens body of ``request``'s Converse body."""
    body = build_body(request, route)
    return {"input": {"converse": {k: body[k] for k in COUNTED_FIELDS if k in body}}}


def read_input_tokens(data: dict[str, Any]) -> int:
    """The ``inputTokens`` of a CountTokens answer."""
    counted = data.get("inputTokens")
    if type(counted) is not int or counted < 0:
        raise CountReplyError("the answer has no inputTokens count")
    return counted


async def _headers(route: Route, client: CallContext, url: str, body: bytes) -> dict[str, str]:
    """As a Converse call authenticates: a bearer key when there is one, else SigV4."""
    settings = client.settings
    if route.endpoint.api_key_env:
        bearer: str | None = settings.api_key(route.endpoint.api_key_env, route.provider)
    else:
        bearer = settings.getenv(BEARER_ENV) or None
        register_secret(bearer)
    if bearer is not None:
        return provider_headers(route, settings, auth={"authorization": f"Bearer {bearer}"})
    options = HTTP.options(client)
    region = region_for(route, settings, options)
    profile = route.endpoint.options.get("profile") or options.profile
    found = await frozen_credentials(settings, profile, route)
    return await signed_headers(url, provider_headers(route, settings), body, found, region)


async def count_tokens(route: Route, content: str | Request, client: CallContext) -> int | None:
    """The prompt's input tokens as Bedrock counts them, or None (see the module)."""
    if isinstance(content, str):
        return None
    options = HTTP.options(client)
    base = route.endpoint.base_url
    region = region_for(route, client.settings, options) if base is None else ""
    url = f"{base_url_for(route, region)}/model/{quote(route.model, safe='')}/count-tokens"
    body = json.dumps(count_body(content, route), separators=(",", ":")).encode()
    try:
        headers = await _headers(route, client, url, body)
        data = await HTTP.call_json(client, route, url, headers=headers, method="POST", body=body)
        return read_input_tokens(data)
    except StatusError as exc:
        if exc.status_code in NO_ENDPOINT:
            return None
        raise
    except CountReplyError as exc:
        raise ERRORS.make(
            f"{route.provider}'s CountTokens answered without a count: {exc}",
            ErrorClass(kind="other", reason="no count in the answer"),
            route,
        ) from None
