"""The ``anthropic`` provider: one Messages API stream per call, on the kit's HTTP path.

The request is the one the anthropic SDK would send (:mod:`modelplug_anthropic.http`),
without the SDK: importing it costs seconds (some 3,000 modules). The kit sends it
(once more at once when a pooled keep-alive connection turns out dead), turns an error
status, a web page, a stall or a cut into this plugin's classified errors
(:mod:`modelplug_anthropic.errors`) and closes the connection on an abort. The bytes
are read here, through the kit's SSEFramer and
:class:`~modelplug_anthropic.reader.MessageReader`, not through the SDK's snapshot
accumulator, whose cost grows with the square of the answer.

A plain text delta takes the hot path below (one JSON parse, a few lookups, the
TextDelta); every other event goes through the reader, which checks it. The stream is
done at message_stop: leaving the kit's block there reads what is left (the chunked
end, a few bytes) so that the next call reuses the connection, and then Done carries
the message the reader assembled.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from modelplug import Done, Event, ModelError, Request, Route, TextDelta
from modelplug_kit import PENALTIES, SSEFramer, dropped_sampling

from .budget import fit_thinking
from .errors import ERRORS, error_event, malformed
from .http import HTTP, messages_url, request_headers
from .mapping import betas_of, to_wire_params
from .options import cache_enabled
from .reader import MessageReader, Problem, SplicedStream

if TYPE_CHECKING:
    from modelplug import CallContext
    from modelplug_kit import Answer

__all__ = ["encode_body", "stream_messages"]


def encode_body(params: dict[str, Any]) -> str:
    """The request body as the SDK encodes it: compact, non-ASCII as it is, no NaN,
    with ``stream: true``."""
    return json.dumps(
        {**params, "stream": True}, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )


async def stream_messages(
    route: Route, request: Request, client: CallContext, key: str | None
) -> AsyncIterator[Event]:
    """Stream one request; see the module docstring."""
    options = HTTP.options(client)
    request, budget_notice = fit_thinking(request, route)
    if budget_notice is not None:
        yield budget_notice  # before sending: the caller hears why thinking changed
    unsent = dropped_sampling(route, request, PENALTIES, "the Messages API has no penalties")
    if unsent is not None:
        yield unsent
    text = encode_body(to_wire_params(request, route, cache=cache_enabled(request, options)))
    hide = request.thinking is not None and request.thinking.hide
    reader = MessageReader(route, hide_thinking=hide, sent_chars=len(text))
    headers = request_headers(route, key, client.settings, betas_of(request))
    url = messages_url(route)
    async with HTTP.stream(client, route, url, body=text.encode(), headers=headers) as answer:
        answer.partial = reader.partial
        empty = True  # no byte of a body yet
        seen = 0  # events read
        if answer.whole is not None:
            empty = False
            for event in _whole_body(route, reader, answer.whole):
                yield event
        else:
            framer = SSEFramer()
            feed = framer.feed
            loads = json.loads
            text_delta = TextDelta.of  # bound once: a classmethod binds on every call
            text_block = reader.text_block
            async for chunk in answer:
                empty = False
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
                            piece = delta.get("text")
                            if pieces is not None and type(piece) is str:
                                if piece:
                                    pieces.append(piece)
                                    yield text_delta(piece)
                                continue
                    for event in _slow_event(route, reader, name, obj, data):
                        yield event
                    if reader.stopped:
                        break
                if reader.stopped:
                    # Done at message_stop; the kit reads the rest, briefly, for reuse.
                    break
            else:
                for name, data in framer.close():
                    seen += 1
                    for event in _slow_event(
                        route, reader, name, _parsed(route, reader, data), data
                    ):
                        yield event
        if not reader.complete:
            raise _ended_early(route, reader, answer, empty, seen)
    final, before = reader.finish()
    for event in before:
        yield event
    yield Done(response=final)


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
        raise ERRORS.transient(
            route, str(exc), reason="spliced stream", partial=reader.partial()
        ) from None
    except Problem as exc:
        raise malformed(route, str(exc), data, partial=reader.partial()) from None


def _whole_body(route: Route, reader: MessageReader, body: bytes) -> list[Event]:
    """A JSON 200 (the kit has already raised one with an ``error`` in it): a whole
    message from a server that ignored ``stream``, or something that is no answer."""
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
    route: Route, reader: MessageReader, answer: Answer, empty: bool, seen: int
) -> ModelError:
    """The error for a stream that ended before the server said it was done."""
    if empty:
        return ERRORS.transient(
            route,
            "Anthropic answered 200 with an empty body (no events)",
            reason="the stream ended early",
        )
    if not seen:
        kind = answer.headers.get("content-type", "").split(";")[0].strip()
        what = f"{kind} with no event in it" if kind else "a body with no event in it"
        return ERRORS.not_a_stream(route, what, base=answer.base)
    if reader.message is None:
        return ERRORS.transient(
            route,
            "the stream from Anthropic ended before message_start",
            reason="the stream ended early",
        )
    return ERRORS.transient(
        route,
        "the stream from Anthropic ended before message_stop (the answer is incomplete)",
        reason="the stream ended early",
        partial=reader.partial(),
    )
