"""Counting before sending: ``POST /responses/input_tokens`` -> ``{"object":
"response.input_tokens", "input_tokens": N}``, the request the openai SDK's
``responses.input_tokens.count`` sends (model, input, instructions, tools, tool_choice,
reasoning, text: the parts of a Responses request that make up its input).

A text alone (``Client.count_tokens``) is counted as the one input it would be, with
the model's message framing: OpenAI has no count of bare text, so None. A server of
this type without the path (Azure OpenAI today, llama.cpp's /v1/responses, a proxy)
answers 404, 405 or 501: None, a fact.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from modelplug import ErrorClass, Request, Route

from .errors import ERRORS, ResponsesError
from .http import HTTP, request_headers
from .request import build_body

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["COUNTED_FIELDS", "count_body", "count_tokens", "read_input_tokens"]

# What of a Responses body the count takes (the SDK's InputTokenCountParams).
COUNTED_FIELDS = ("model", "input", "instructions", "tools", "tool_choice", "reasoning", "text")
NO_ENDPOINT = frozenset({404, 405, 501})


class CountReplyError(ValueError):
    """An answer of input_tokens that holds no count."""


def count_body(request: Request, route: Route, client: CallContext) -> dict[str, Any]:
    """The input_tokens body for ``request``: its Responses body's input parts."""
    body = build_body(request, route, HTTP.options(client))
    return {name: body[name] for name in COUNTED_FIELDS if name in body}


def read_input_tokens(data: dict[str, Any]) -> int:
    """The ``input_tokens`` of an input_tokens answer."""
    counted = data.get("input_tokens")
    if type(counted) is not int or counted < 0:
        raise CountReplyError("the answer has no input_tokens count")
    return counted


async def count_tokens(route: Route, content: str | Request, client: CallContext) -> int | None:
    """The prompt's input tokens as the Responses API counts them, or None (see the
    module)."""
    if isinstance(content, str):
        return None
    key = client.settings.api_key(route.endpoint.api_key_env, route.provider)
    headers = request_headers(route, key, client.settings, accept="application/json")
    body = json.dumps(count_body(content, route, client)).encode()
    url = f"{route.endpoint.base_url}/responses/input_tokens"
    try:
        data = await HTTP.call_json(client, route, url, headers=headers, method="POST", body=body)
        return read_input_tokens(data)
    except ResponsesError as exc:
        if exc.status_code in NO_ENDPOINT:
            return None
        raise
    except CountReplyError as exc:
        raise ERRORS.make(
            f"{route.provider}'s input_tokens answered without a count: {exc}",
            ErrorClass(kind="other", reason="no count in the answer"),
            route,
        ) from None
