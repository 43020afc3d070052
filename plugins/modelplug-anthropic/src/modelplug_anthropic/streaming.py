"""The ``anthropic`` provider: one Messages API stream per call.

The SDK sends the request (headers, key, errors for a non-2xx status) and hands back
the raw response (``with_streaming_response``); the bytes are read here, through the
kit's SSEFramer and :class:`~modelplug_anthropic.reader.MessageReader`, not through
the SDK's snapshot accumulator, whose cost grows with the square of the answer.

A plain text delta takes the hot path below (one JSON parse, a few lookups, the
TextDelta); every other event goes through the reader, which checks it. Deltas go to
the screen as they come; Done carries the message the reader assembled. Every way a
stream can go wrong ends in a classified error carrying what was produced
(:mod:`modelplug_anthropic.errors`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from modelplug.plugin import SSEFramer
from modelplug.types import Done, Event, Request, Route, TextDelta

from . import sdk as sdk_module
from .errors import (
    ResponseStartTimeout,
    StreamError,
    broken,
    error_event,
    malformed,
    not_an_event_stream,
)
from .mapping import to_wire_params
from .reader import MessageReader, Problem, SplicedStream

if TYPE_CHECKING:
    from modelplug.plugin import Client

__all__ = ["stream_messages"]

# How much of a body that is not an event stream is quoted in the error.
_SNIFF = 200


async def stream_messages(
    route: Route, request: Request, client: Client, key: str | None
) -> AsyncIterator[Event]:
    """Stream one request; see the module docstring."""
    import httpx2

    sdk, options = sdk_module.sdk_client(route, client, key)
    params = to_wire_params(request, route, cache=sdk_module.cache_enabled(request, options))
    kwargs, extra = sdk_module.split_params(params)
    hide = request.thinking is not None and request.thinking.hide
    manager = sdk.messages.with_streaming_response.create(
        **kwargs, stream=True, extra_body=extra or None
    )
    try:
        async with asyncio.timeout(options.first_byte_timeout):
            raw = await manager.__aenter__()
    except TimeoutError:
        raise ResponseStartTimeout(
            f"Anthropic sent no response within {options.first_byte_timeout:g} s "
            "(first_byte_timeout in [anthropic])"
        ) from None
    try:
        response = raw.http_response
        reader = MessageReader(route, hide_thinking=hide, sent_chars=_chars(params))
        content_type = response.headers.get("content-type", "")
        if content_type and not content_type.startswith("text/event-stream"):
            body = await response.aread()
            for event in _whole_body(route, reader, content_type, body):
                yield event
        else:
            framer = SSEFramer()
            feed = framer.feed
            loads = json.loads
            text_delta = TextDelta.of  # bound once: a classmethod binds on every call
            text_block = reader.text_block
            sniffed = b""
            seen = 0  # events read
            chunks = response.aiter_bytes()
            try:
                async for chunk in chunks:
                    if len(sniffed) < _SNIFF:
                        sniffed += chunk[:_SNIFF]
                    for name, data in feed(chunk):
                        seen += 1
                        try:
                            obj = loads(data)
                        except ValueError:
                            raise malformed(
                                route, "an event that is not JSON", data, partial=reader.partial()
                            ) from None
                        # The hot path: a text delta for an open text block.
                        if type(obj) is dict and obj.get("type") == "content_block_delta":
                            delta = obj.get("delta")
                            if type(delta) is dict and delta.get("type") == "text_delta":
                                pieces = text_block(obj.get("index"))
                                text = delta.get("text")
                                if pieces is not None and type(text) is str:
                                    if text:
                                        pieces.append(text)
                                        yield text_delta(text)
                                    continue
                        for event in _slow_event(route, reader, name, obj, data):
                            yield event
                        if reader.stopped:
                            break
                    if reader.stopped:
                        # Done at message_stop: a gateway may hold the connection open.
                        break
                else:
                    for name, data in framer.close():
                        seen += 1
                        for event in _slow_event(
                            route, reader, name, _parsed(route, reader, data), data
                        ):
                            yield event
            except httpx2.ReadTimeout:
                raise broken(
                    route,
                    f"Anthropic sent nothing for {options.read_timeout:g} s (read_timeout in "
                    "[anthropic]); the stream stalled",
                    reason="the stream stalled",
                    partial=reader.partial(),
                ) from None
            except (httpx2.TransportError, httpx2.DecodingError) as exc:
                raise broken(
                    route,
                    f"the connection to Anthropic dropped mid-stream ({type(exc).__name__})",
                    reason="connection lost",
                    partial=reader.partial(),
                ) from None
            finally:
                # Closed here, not at garbage collection (after its loop may be gone).
                await chunks.aclose()
            if not reader.complete:
                raise _ended_early(route, reader, content_type, sniffed, seen)
        final, before = reader.finish()
        for event in before:
            yield event
        yield Done(response=final)
    finally:
        # Closing the response ends the request: an abort reaches the server.
        await manager.__aexit__(None, None, None)


def _chars(params: dict[str, Any]) -> int:
    """The request's size in characters, for an estimate when no usage comes back."""
    try:
        return len(json.dumps(params, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        return 0


def _parsed(route: Route, reader: MessageReader, data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        raise malformed(
            route, "an event that is not JSON", data, partial=reader.partial()
        ) from None


def _slow_event(route: Route, reader: MessageReader, name: str, obj: Any, data: str) -> list[Event]:
    """Every event but a plain text delta: errors, starts, stops, usage, thinking."""
    if type(obj) is dict and (
        obj.get("type") == "error"
        or (name == "error" and "type" not in obj)
        or ("error" in obj and "type" not in obj)  # a proxy's {"error": {...}}
    ):
        raise error_event(route, obj, partial=reader.partial())
    try:
        return reader.feed(obj)
    except SplicedStream as exc:
        raise broken(route, str(exc), reason="spliced stream", partial=reader.partial()) from None
    except Problem as exc:
        raise malformed(route, str(exc), data, partial=reader.partial()) from None


def _whole_body(route: Route, reader: MessageReader, content_type: str, body: bytes) -> list[Event]:
    """A 200 that is not an event stream: a whole message (a server that ignored
    ``stream``), an error object, or a page that is no answer at all."""
    if not content_type.startswith("application/json"):
        raise not_an_event_stream(route, content_type, body)
    text = body.decode("utf-8", "replace")
    obj = _parsed(route, reader, text)
    if type(obj) is dict and obj.get("type") == "message":
        return _replayed(route, reader, obj, text)
    if type(obj) is dict and ("error" in obj or obj.get("type") == "error"):
        raise error_event(route, obj)
    raise malformed(route, "a JSON body that is neither a message nor an error", text)


def _replayed(route: Route, reader: MessageReader, whole: dict[str, Any], text: str) -> list[Event]:
    """A whole message fed through the reader as the events it would have streamed, so
    it is checked (and shown) exactly as a stream is."""
    content = whole.get("content")
    if not isinstance(content, list):
        raise malformed(route, "a message without a content list", text)
    opening = {**whole, "content": []}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": opening}]
    for index, block in enumerate(content):
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {
                "stop_reason": whole.get("stop_reason"),
                "stop_sequence": whole.get("stop_sequence"),
            },
            "usage": whole.get("usage"),
        }
    )
    events.append({"type": "message_stop"})
    shown: list[Event] = []
    for event in events:
        shown.extend(_slow_event(route, reader, "", event, text))
    return shown


def _ended_early(
    route: Route, reader: MessageReader, content_type: str, sniffed: bytes, seen: int
) -> StreamError:
    """The error for a stream that ended before the server said it was done."""
    if not sniffed:
        return broken(
            route,
            "Anthropic answered 200 with an empty body (no events)",
            reason="the stream ended early",
        )
    if not seen:
        shown = f"{content_type.split(';')[0]} with no event in it" if content_type else ""
        return not_an_event_stream(route, shown or "a body with no event in it", sniffed)
    if reader.message is None:
        return broken(
            route,
            "the stream from Anthropic ended before message_start",
            reason="the stream ended early",
        )
    return broken(
        route,
        "the stream from Anthropic ended before message_stop (the answer is incomplete)",
        reason="the stream ended early",
        partial=reader.partial(),
    )
