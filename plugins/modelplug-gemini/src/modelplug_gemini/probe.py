"""``modelplug resolve --probe``: the Gemini API's models endpoint says what a model
takes (``inputTokenLimit``) and gives (``outputTokenLimit``), and whether it thinks."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from modelplug.plugin import ErrorClass
from modelplug.types import ModelInfo, Route

from .errors import GeminiError, http_error
from .stream import open_stream

if TYPE_CHECKING:
    from modelplug.plugin import Client

__all__ = ["probe_model"]


def _limit(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


async def probe_model(route: Route, client: Client) -> ModelInfo:
    response, _ = await open_stream(route, client, None)
    try:
        raw = await response.aread()
    finally:
        await response.aclose()
    if response.status_code >= 300:
        raise http_error(response.status_code, response.headers, raw, route)
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise GeminiError(
            f"probing {route.provider}: the models endpoint did not answer with a JSON object",
            error_class=ErrorClass(kind="other", reason="the probe's answer was not JSON"),
            route=route,
        )
    thinking = body.get("thinking")
    return ModelInfo(
        context_window=_limit(body.get("inputTokenLimit")),
        max_output_tokens=_limit(body.get("outputTokenLimit")),
        thinking="optional" if thinking is True and route.info.thinking is None else None,
        notes=[f"{route.provider} reports {body.get('name', route.model)}"],
    )
