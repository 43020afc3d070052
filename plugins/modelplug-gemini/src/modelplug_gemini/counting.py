"""Counting before sending: ``models/{model}:countTokens`` -> ``{"totalTokens": N}``.

The Gemini API counts ``contents`` alone (a text, for ``Client.count_tokens``) or a
whole ``generateContentRequest`` (the prompt with its system instruction and function
declarations, for ``Client.count_prompt``); Vertex AI takes the same parts at the top
level of its CountTokensRequest. A count path that answers 404, 405 or 501 (a proxy
that does not pass it on) is None, a fact.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from modelplug import ErrorClass, Request, Route, redact_data

from .errors import ERRORS, GeminiError, google_error
from .http import HTTP, prepare
from .request import build_body
from .routes import VERTEX

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["count_body", "count_tokens", "read_total_tokens"]

NO_ENDPOINT = frozenset({404, 405, 501})
# What of a generateContent body changes the input's count (not generationConfig).
PROMPT_FIELDS = ("contents", "systemInstruction", "tools", "toolConfig", "cachedContent")


class CountReplyError(ValueError):
    """A countTokens answer that holds no count."""


def count_body(route: Route, content: str | Request) -> dict[str, Any]:
    """The countTokens body for ``content`` on ``route`` (see the module)."""
    if isinstance(content, str):
        return {"contents": [{"role": "user", "parts": [{"text": content}]}]}
    body = build_body(content, route)
    prompt = {name: body[name] for name in PROMPT_FIELDS if name in body}
    if route.endpoint.type == VERTEX:
        return prompt
    return {"generateContentRequest": {"model": f"models/{route.model}", **prompt}}


def read_total_tokens(data: dict[str, Any]) -> int:
    """The ``totalTokens`` of a countTokens answer."""
    counted = data.get("totalTokens")
    if type(counted) is not int or counted < 0:
        raise CountReplyError("the answer has no totalTokens count")
    return counted


async def count_tokens(route: Route, content: str | Request, client: CallContext) -> int | None:
    """The tokens of ``content`` as the model counts them, or None (see the module)."""
    body = json.dumps(count_body(route, content), ensure_ascii=False).encode()
    try:
        target, headers = await prepare(route, client)
        url = f"{target.model_url}:countTokens"
        data = await HTTP.call_json(client, route, url, headers=headers, method="POST", body=body)
        if data.get("error"):
            raise google_error(None, redact_data(data), route)
        return read_total_tokens(data)
    except GeminiError as exc:
        if exc.status_code in NO_ENDPOINT:
            return None
        raise
    except CountReplyError as exc:
        raise ERRORS.make(
            f"{route.provider}'s countTokens answered without a count: {exc}",
            ErrorClass(kind="other", reason="no count in the answer"),
            route,
        ) from None
