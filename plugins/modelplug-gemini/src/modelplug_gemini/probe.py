"""``modelplug resolve --probe``: the Gemini API's models endpoint says what a model
takes (``inputTokenLimit``) and gives (``outputTokenLimit``), and whether it thinks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from modelplug import ModelInfo, Route

from .http import HTTP, prepare

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["probe_model"]


def _limit(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


async def probe_model(route: Route, client: CallContext) -> ModelInfo:
    target, headers = await prepare(route, client)
    body = await HTTP.call_json(client, route, target.model_url, headers=headers)
    thinking = body.get("thinking")
    return ModelInfo(
        context_window=_limit(body.get("inputTokenLimit")),
        max_output_tokens=_limit(body.get("outputTokenLimit")),
        thinking="optional" if thinking is True and route.info.thinking is None else None,
        notes=[f"{route.provider} reports {body.get('name', route.model)}"],
    )
