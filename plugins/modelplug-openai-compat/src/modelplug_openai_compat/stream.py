"""Stream one Chat Completions call: open it, read its events, end with one Done.

The pieces, in the order a call meets them:

- The kit's HTTP path (:data:`modelplug_openai_compat.http.HTTP`): the request, one
  resend on a dead keep-alive connection, error statuses and web pages, a cut or a
  stall mid-stream, closing early and keeping the connection.
- The kit's :class:`SSEFramer` turns network chunks into whole events.
- The fast path in :func:`stream_chat` takes the common event, a plain text delta:
  one JSON parse (json's C scanner, called directly), a few dict lookups and the
  TextDelta.
- :class:`EventReader` reads every other event (reasoning, content parts, tool calls,
  finish, usage, errors, ``[DONE]``) and the last event at the tail of the stream,
  through the :class:`~modelplug_openai_compat.accumulator.Accumulator`.
- :func:`modelplug_openai_compat.answer.finish` builds the Response.

The reading loop is inline in :func:`stream_chat`, not a nested generator: every
generator layer would cost a hop per event.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from modelplug import Event, ModelError, Notice, Request, Route, TextDelta, redact
from modelplug_kit import SSEFramer

from .accumulator import KNOWN_FIELDS, Accumulator
from .answer import finish
from .errors import stream_broken
from .http import HTTP, request_headers
from .reasoning import fit_thinking
from .request import build_body, unsent_sampling

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["EventReader", "stream_chat"]

# A delta the fast path takes holds nothing but these.
PLAIN_DELTA = frozenset({"role", "content"})


class EventReader:
    """Reads one whole SSE event the slow way (the same for the tail of a stream)."""

    __slots__ = ("acc", "done", "route")

    def __init__(self, route: Route, acc: Accumulator) -> None:
        self.route = route
        self.acc = acc
        self.done = False  # the server sent [DONE]

    def read(self, name: str, data: str) -> list[Event]:
        """The events of one SSE event: ``name`` is its ``event:`` field ("" for none)."""
        if name == "error":
            # llama.cpp's `error:` field, or `event: error`: the call failed after a 200.
            self.acc.fail(_json_or_text(data))
        try:
            value = json.loads(data)
        except ValueError:
            stripped = data.strip()
            if stripped == "[DONE]":
                self.done = True
                return []
            if not stripped:
                return []  # an empty data line: a keep-alive
            raise self.malformed(data) from None
        return self.read_value(value, data)

    def read_value(self, value: Any, data: str) -> list[Event]:
        """The events of one parsed event (``data`` is its text, for the error)."""
        if type(value) is not dict:
            raise self.malformed(data)
        return self.acc.event(value)

    def whole(self, body: bytes) -> list[Event]:
        """A server that ignored stream=true: its whole completion is the one event it
        would have streamed, and the end."""
        text = body.decode("utf-8", "replace")
        try:
            whole = json.loads(text)
        except ValueError:
            raise self.malformed(text) from None
        if not isinstance(whole, dict):
            raise self.malformed(text)
        choices = whole.get("choices")
        event = dict(whole)
        event["choices"] = [
            {"delta": c.get("message") or {}, "finish_reason": c.get("finish_reason")}
            for c in (choices if isinstance(choices, list) else [])[:1]
            if isinstance(c, dict)
        ]
        self.done = True
        return self.acc.event(event)

    def end(self, sent: int, headers: Mapping[str, str]) -> list[Event]:
        """The last events of a stream that ended: a stream without its end marker is
        a transient error carrying what arrived."""
        if not self.done and self.acc.finish_reason is None:
            raise stream_broken(
                self.route,
                f"the stream from {self.route.provider} ended before the server said it "
                "was done (no finish_reason and no [DONE])",
                reason="the stream ended early",
                partial=self.acc.partial(),
            )
        return finish(self.route, self.acc, sent, headers)

    def malformed(self, raw: str) -> ModelError:
        return stream_broken(
            self.route,
            f"{self.route.provider} sent an event that is not a JSON object: "
            f"{redact(raw.strip())[:200]!r}",
            reason="malformed stream event",
            partial=self.acc.partial(),
        )


def _json_or_text(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return {"message": data.strip() or "the server reported an error"}


async def stream_chat(
    route: Route, request: Request, client: CallContext, key: str | None
) -> AsyncIterator[Event]:
    """The events of one call, ending with exactly one Done."""
    request, fitted = fit_thinking(request, route)
    if fitted is not None:
        yield fitted
    unsent = unsent_sampling(request, route)
    if unsent is not None:
        yield unsent
    notices: list[Notice] = []
    payload = json.dumps(build_body(request, route, notices), ensure_ascii=False).encode()
    for notice in notices:
        yield notice
    headers = request_headers(route, key, client.settings)
    mode = route.info.text_tool_calls or "whole"
    held = client.held_text(request.tools, mode) if request.tools and mode != "off" else None
    acc = Accumulator(route, request, held)
    reader = EventReader(route, acc)
    read, read_value, text = reader.read, reader.read_value, acc.text
    framer = SSEFramer()
    feed = framer.feed
    # One scanner per stream (its memo is not shared); typeshed does not declare it.
    # Called directly, it skips json.loads' two regex matches and two Python frames.
    scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
    text_delta = TextDelta.of  # bound once: a classmethod binds on every call
    # A bound issuperset takes the dict itself: no keys view per event.
    all_known, plain = KNOWN_FIELDS.issuperset, PLAIN_DELTA
    fast = False  # opens after the first event (read in full), when no text is held
    url = f"{route.endpoint.base_url}/chat/completions"
    async with HTTP.stream(client, route, url, body=payload, headers=headers) as answer:
        answer.partial = acc.partial
        if answer.whole is not None:
            for event in reader.whole(answer.whole):
                yield event
        else:
            async for chunk in answer:
                for name, data in feed(chunk):
                    if fast and not name:
                        # The fast path: a plain text delta of the first choice costs
                        # one parse and a few lookups. Anything else, odd shapes
                        # included, is read in full below; that reading judges them.
                        # A usage riding on a text delta (xAI sends a running one on
                        # every chunk) is not read here: the last usage comes on the
                        # finish chunk or a chunk of its own, which are read in full.
                        obj = None
                        try:
                            obj, end = scan(data, 0)
                            choice = obj["choices"][0]
                            delta = choice["delta"]
                            content = delta.get("content")
                            if (
                                type(content) is str
                                and content
                                and end == len(data)
                                and choice.get("finish_reason") is None
                                and not choice.get("index")
                                and all_known(obj)
                                and (len(delta) == 1 or delta.keys() <= plain)
                            ):
                                text.append(content)
                                yield text_delta(content)
                                continue
                        except (StopIteration, ValueError, LookupError, TypeError, AttributeError):
                            pass
                        whole_json = obj is not None and end == len(data)
                        events = read_value(obj, data) if whole_json else read(name, data)
                    else:
                        events = read(name, data)
                        fast = held is None
                    for event in events:
                        yield event
            for name, data in framer.close():
                # A last event without its blank line.
                for event in read(name, data):
                    yield event
        for event in reader.end(len(payload), answer.headers):
            yield event
