"""Counting before sending: ``POST /v1/messages/count_tokens``, the request the SDK's
``messages.count_tokens`` sends (model, messages, system, tools, tool_choice, thinking,
output_config) -> ``{"input_tokens": N}``.

Claude counts a rendered prompt, not a string: declaring any tool adds its own
tool-use preamble (seed 004 measured ~497 tokens), so the parts of a prompt are not
separately countable, and a text alone (``Client.count_tokens``) cannot be counted
without a message around it: None, a fact. A count path that answers 404, 405 or 501
(a gateway or proxy that does not pass it on) is None too.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from modelplug import ErrorClass, Request, Route
from modelplug_kit import StatusError

from .errors import ERRORS
from .http import HTTP, base_url, request_headers
from .mapping import betas_of, to_wire_params

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["COUNTED_FIELDS", "count_body", "count_tokens", "read_input_tokens"]

# The body fields count_tokens takes (the SDK's MessageCountTokensParams); the rest of a
# Messages body (max_tokens, sampling, stop sequences) does not change the input.
COUNTED_FIELDS = (
    "model",
    "messages",
    "system",
    "tools",
    "tool_choice",
    "thinking",
    "output_config",
    "mcp_servers",
    "context_management",
)
NO_ENDPOINT = frozenset({404, 405, 501})


class CountReplyError(ValueError):
    """An answer of count_tokens that holds no count."""


def count_body(request: Request, route: Route) -> dict[str, Any]:
    """The count_tokens body for ``request``: its Messages body, without what does not
    change the input (no cache marks either: they do not change a count)."""
    params = to_wire_params(request, route, cache=False)
    return {name: params[name] for name in COUNTED_FIELDS if name in params}


def read_input_tokens(data: dict[str, Any]) -> int:
    """The ``input_tokens`` of a count_tokens answer."""
    counted = data.get("input_tokens")
    if type(counted) is not int or counted < 0:
        raise CountReplyError("the answer has no input_tokens count")
    return counted


async def count_tokens(route: Route, content: str | Request, client: CallContext) -> int | None:
    """The prompt's input tokens as Claude counts them; None for a text alone and for a
    server with no count path (see the module)."""
    if isinstance(content, str):
        return None
    key = client.settings.api_key(route.endpoint.api_key_env, route.provider)
    headers = request_headers(route, key, client.settings, betas_of(content))
    body = json.dumps(count_body(content, route)).encode()
    url = f"{base_url(route)}/v1/messages/count_tokens"
    try:
        data = await HTTP.call_json(client, route, url, headers=headers, method="POST", body=body)
        return read_input_tokens(data)
    except StatusError as exc:
        if exc.status_code in NO_ENDPOINT:
            return None
        raise
    except CountReplyError as exc:
        raise ERRORS.make(
            f"{route.provider}'s count_tokens answered without a count: {exc}",
            ErrorClass(kind="other", reason="no count in the answer"),
            route,
        ) from None
