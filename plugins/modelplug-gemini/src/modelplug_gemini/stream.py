"""Stream one call: the request, the SSE reading, the events and the final Response.

The kit's HTTP path (:data:`modelplug_gemini.http.HTTP`) sends the request and hands
back the answer's bytes as they arrive: one resend on a dead keep-alive connection,
error statuses and web pages, a cut or a stall mid-stream, closing early and keeping
the connection are its work. One JSON parse per event: the kit's SSEFramer cuts the
bytes into events, each a whole ``GenerateContentResponse`` read by
:class:`~modelplug_gemini.reader.Reader`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from modelplug import Done, Event, ModelError, Request, Route, redact, redact_data
from modelplug_kit import SSEFramer, dropped_sampling

from .budget import fit_thinking
from .errors import google_error, malformed_call, stream_broken
from .http import HTTP, prepare
from .reader import MALFORMED, Reader
from .request import build_body

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["Parser", "stream_generate"]


class Parser:
    """Bytes in, events out, then the Response: the whole reading of one stream, apart
    from the network (so it can be fed any split of recorded bytes)."""

    def __init__(self, route: Route, request: Request) -> None:
        self.route = route
        self.reader = Reader(route, request)
        self.framer = SSEFramer()

    def feed(self, chunk: bytes) -> list[Event]:
        out: list[Event] = []
        for _, data in self.framer.feed(chunk):
            out.extend(_read(self.reader, self.route, data))
        return out

    def close(self) -> list[Event]:
        out: list[Event] = []
        for _, data in self.framer.close():
            out.extend(_read(self.reader, self.route, data))
        return out

    def whole(self, raw: bytes) -> list[Event]:
        """A JSON answer: the events as one JSON array (``streamGenerateContent``
        without ``alt=sse``, which a proxy may have dropped), or a single event."""
        try:
            data = json.loads(raw)
        except ValueError:
            raise _malformed(self.route, raw.decode("utf-8", "replace"), self.reader) from None
        out: list[Event] = []
        for event in data if type(data) is list else [data]:
            if type(event) is not dict:
                raise _malformed(self.route, json.dumps(event), self.reader)
            out.extend(_take(self.reader, self.route, event))
        return out

    def finish(self, sent: int) -> Done:
        """The Done event, or the classified error of a stream that did not finish."""
        reader, route = self.reader, self.route
        if not reader.finished:
            raise stream_broken(
                route,
                f"the stream from {route.provider} ended before the model finished "
                "(no finishReason)",
                reason="the stream ended early",
                partial=reader.partial(),
            )
        if reader.finish_reason in MALFORMED:
            raise malformed_call(route, reader.finish_message or "", reader.partial())
        return Done(response=reader.response(sent))


async def stream_generate(
    route: Route, request: Request, client: CallContext
) -> AsyncIterator[Event]:
    """The events of one call, ending with exactly one Done."""
    request, budget_notice = fit_thinking(request, route)
    if budget_notice is not None:
        yield budget_notice  # before sending: the caller hears why thinking changed
    unsent = dropped_sampling(
        route, request, ["repeat_penalty"], "generationConfig has no multiplicative penalty"
    )
    if unsent is not None:
        yield unsent
    body = build_body(request, route)
    payload = json.dumps(body, ensure_ascii=False).encode()
    target, headers = await prepare(route, client)
    parser = Parser(route, request)
    url = target.stream_url
    async with HTTP.stream(client, route, url, body=payload, headers=headers) as answer:
        answer.partial = parser.reader.partial
        if answer.whole is not None:
            for event in parser.whole(answer.whole):
                yield event
        else:
            async for chunk in answer:
                for event in parser.feed(chunk):
                    yield event
            for event in parser.close():
                yield event
    # Past the block the answer is read to its end and its connection back in the pool.
    yield parser.finish(len(payload))


def _read(reader: Reader, route: Route, data: str) -> list[Event]:
    try:
        event = json.loads(data)
    except ValueError:
        raise _malformed(route, data, reader) from None
    if type(event) is not dict:
        raise _malformed(route, data, reader)
    return _take(reader, route, event)


def _take(reader: Reader, route: Route, event: dict[str, Any]) -> list[Event]:
    try:
        events = reader.event(event)
    except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
        # A part of a shape no model sends (a name that is not a string, say): the
        # stream is unreadable from here, and what came before is kept.
        raise stream_broken(
            route,
            f"{route.provider} sent an event this plugin cannot read ({type(exc).__name__})",
            reason="malformed stream event",
            partial=reader.partial(),
        ) from None
    if reader.error is not None:
        raise google_error(
            None, redact_data({"error": reader.error}), route, partial=reader.partial()
        )
    return events


def _malformed(route: Route, data: str, reader: Reader) -> ModelError:
    return stream_broken(
        route,
        f"{route.provider} sent an event that is not a JSON object: {redact(data.strip())[:200]!r}",
        reason="malformed stream event",
        partial=reader.partial(),
    )
