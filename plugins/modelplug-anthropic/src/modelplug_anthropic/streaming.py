"""The ``anthropic`` provider: one Messages API stream per call.

Deltas go to the screen as they come; Done carries the final message as the SDK
assembled it (usage from message_start, overwritten by message_delta's cumulative
counts), never one re-assembled here from the deltas.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from modelplug.types import (
    Done,
    Event,
    Request,
    Response,
    Route,
    TextDelta,
    ThinkingDelta,
    ToolCallStart,
)

from . import sdk as sdk_module
from .errors import ResponseStartTimeout
from .mapping import from_wire_message, to_wire_params

if TYPE_CHECKING:
    from modelplug.client import Client

__all__ = ["partial_response", "stream_messages"]


def partial_response(
    snapshot: Any, finished: set[int], route: Route, hide: bool
) -> Response | None:
    """What a stream produced before it failed: finished blocks and any text, so a
    half-written thinking block or tool call is never kept as if it were whole."""
    if snapshot is None:
        return None
    data = snapshot.to_dict(mode="json")
    kept = [
        block
        for index, block in enumerate(data.get("content") or [])
        if index in finished or (block.get("type") == "text" and block.get("text"))
    ]
    if not kept:
        return None
    data["content"] = kept
    data["stop_reason"] = None
    return from_wire_message(data, route, hide_thinking=hide)


async def stream_messages(
    route: Route, request: Request, client: Client, key: str | None
) -> AsyncIterator[Event]:
    """Stream one request; see the module docstring."""
    limits = sdk_module.LIMITS
    sdk = sdk_module.sdk_client(route, client, key)
    cache = sdk_module.cache_enabled(request, client.settings)
    kwargs, extra = sdk_module.split_stream_params(to_wire_params(request, route, cache=cache))
    hide = request.thinking is not None and request.thinking.hide
    manager = sdk.messages.stream(**kwargs, extra_body=extra or None)
    try:
        async with asyncio.timeout(limits.start):
            stream = await manager.__aenter__()
    except TimeoutError:
        raise ResponseStartTimeout(
            f"Anthropic sent no response within {limits.start:g} s"
        ) from None
    finished: set[int] = set()
    try:
        async for event in stream:
            kind = event.type
            if kind == "content_block_delta":
                delta = event.delta
                if delta.type == "text_delta":
                    if delta.text:
                        yield TextDelta.of(delta.text)
                elif delta.type == "thinking_delta" and delta.thinking and not hide:
                    yield ThinkingDelta(text=delta.thinking)
            elif kind == "content_block_start":
                block = event.content_block
                if block.type == "tool_use":
                    yield ToolCallStart(id=block.id, name=block.name, index=event.index)
            elif kind == "content_block_stop":
                finished.add(event.index)
        final = await stream.get_final_message()
    except Exception as exc:
        try:
            snapshot = stream.current_message_snapshot
        except AssertionError:  # no message_start yet
            snapshot = None
        partial = partial_response(snapshot, finished, route, hide)
        if partial is not None:
            exc.partial = partial  # type: ignore[attr-defined]
        raise
    finally:
        # Closing the stream closes the HTTP response: an abort ends the request.
        await manager.__aexit__(None, None, None)
    yield Done(response=from_wire_message(final, route, hide_thinking=hide))
