"""Stream one Responses API call: request, SSE reading, events, the final Response.

Sending, the status and kind of the answer, a cut or a stall mid-stream, closing early
and keeping the connection are the kit's HTTP path (:data:`modelplug_openai.http.HTTP`);
what is here is the Responses API's wire.

The hot path, a ``response.output_text.delta`` event, costs the framer's split, one
JSON parse and the TextDelta itself: the event's name comes from its ``event:`` line,
so nothing else is looked at. Every other event goes through :class:`Accumulator`.
The reading loop is inline, not a nested generator: each generator layer would cost a
hop per event.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

from modelplug import (
    Block,
    Done,
    Event,
    Message,
    ModelError,
    Notice,
    Request,
    Response,
    Route,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallStart,
    estimated_usage,
    new_tool_use_id,
    redact,
)
from modelplug_kit import SSEFramer, usage_from_responses

from .errors import ERRORS, ResponsesError, failure
from .http import HTTP, request_headers
from .items import Converted, convert_items, reasoning_text, stop_reason
from .request import build_body, unsupported_fields

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["Accumulator", "stream_responses"]

TEXT_DELTA = "response.output_text.delta"
FINAL = frozenset({"response.completed", "response.incomplete"})


class Accumulator:
    """Everything of one answer: text and thinking so far, calls as they start, the
    completed items, and the final response object."""

    def __init__(self, route: Route, request: Request) -> None:
        self.route = route
        self.hide_thinking = request.thinking is not None and request.thinking.hide
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.started: set[str] = set()  # item ids of calls announced by ToolCallStart
        self.added: dict[int, Mapping[str, Any]] = {}  # output_index -> item as it began
        self.arguments: dict[str, list[str]] = {}  # item id -> argument deltas
        self.done: dict[int, Mapping[str, Any]] = {}  # output_index -> completed item
        self.final: Mapping[str, Any] | None = None
        self.served_model: str | None = None
        self.handlers: dict[str, Callable[[dict[str, Any]], list[Event]]] = {
            "response.created": self._created,
            "response.in_progress": self._created,
            "response.output_item.added": self._item_added,
            "response.output_item.done": self._item_done,
            TEXT_DELTA: self._text_delta,
            "response.reasoning_summary_text.delta": self._thinking_delta,
            "response.reasoning_text.delta": self._thinking_delta,
            "response.reasoning_summary_part.added": self._summary_part,
            "response.function_call_arguments.delta": self._arguments_delta,
            "response.completed": self._final,
            "response.incomplete": self._final,
            "response.failed": self._failed,
            "error": self._failed,
        }

    # -- one event ----------------------------------------------------------------------

    def event(self, name: str, data: str) -> list[Event]:
        """Read one whole event (everything but the text delta's fast path)."""
        if self.final is not None:
            return []  # the response is complete; nothing after it counts
        try:
            obj = json.loads(data)
        except ValueError:
            if not data.strip():
                return []  # an empty data line: a keep-alive
            raise self.malformed(data) from None
        if type(obj) is not dict:
            raise self.malformed(data)
        kind = obj.get("type")
        handler = self.handlers.get(kind if isinstance(kind, str) else name)
        if handler is None:
            return []  # an event with nothing for the neutral model (progress, .done)
        try:
            return handler(obj)
        except ResponsesError:
            raise
        except (AttributeError, KeyError, TypeError, ValueError, IndexError):
            raise self.malformed(data) from None

    def _created(self, obj: dict[str, Any]) -> list[Event]:
        response = obj.get("response")
        model = response.get("model") if isinstance(response, Mapping) else None
        if isinstance(model, str) and model:
            self.served_model = model
        return []

    def _item_added(self, obj: dict[str, Any]) -> list[Event]:
        item = obj.get("item")
        index = obj.get("output_index")
        if isinstance(item, Mapping) and isinstance(index, int) and not isinstance(index, bool):
            self.added[index] = item
        if not isinstance(item, Mapping) or item.get("type") != "function_call":
            return []
        name = item.get("name")
        item_id = str(item.get("id") or "")
        if not isinstance(name, str) or not name or item_id in self.started:
            return []
        self.started.add(item_id)
        call_id = item.get("call_id")
        return [
            ToolCallStart(
                id=call_id if isinstance(call_id, str) and call_id else new_tool_use_id(),
                name=name,
                index=index if isinstance(index, int) and not isinstance(index, bool) else 0,
            )
        ]

    def _item_done(self, obj: dict[str, Any]) -> list[Event]:
        item = obj.get("item")
        index = obj.get("output_index")
        if isinstance(item, Mapping):
            if not isinstance(index, int) or isinstance(index, bool):
                index = max(self.done, default=-1) + 1
            self.done[index] = item
        return []

    def _arguments_delta(self, obj: dict[str, Any]) -> list[Event]:
        delta = obj.get("delta")
        item_id = obj.get("item_id")
        if isinstance(delta, str) and isinstance(item_id, str):
            self.arguments.setdefault(item_id, []).append(delta)
        return []

    def _text_delta(self, obj: dict[str, Any]) -> list[Event]:
        delta = obj.get("delta")
        if not isinstance(delta, str):
            raise TypeError("a text delta that is not a string")
        if not delta:
            return []
        self.text.append(delta)
        return [TextDelta.of(delta)]

    def _thinking_delta(self, obj: dict[str, Any]) -> list[Event]:
        delta = obj.get("delta")
        if not isinstance(delta, str) or not delta:
            return []
        self.thinking.append(delta)
        return [] if self.hide_thinking else [ThinkingDelta(text=delta)]

    def _summary_part(self, obj: dict[str, Any]) -> list[Event]:
        # Summaries of one item are paragraphs: the final block joins them with a blank
        # line, and so does the screen.
        index = obj.get("summary_index")
        if isinstance(index, int) and index > 0 and self.thinking:
            return self._thinking_delta({"delta": "\n\n"})
        return []

    def _final(self, obj: dict[str, Any]) -> list[Event]:
        response = obj.get("response")
        if not isinstance(response, Mapping):
            raise TypeError("a final event without its response")
        self.final = response
        return []

    def _failed(self, obj: dict[str, Any]) -> list[Event]:
        raise failure(obj, self.route, self.partial())

    # -- the end ------------------------------------------------------------------------

    def output_items(self) -> list[Any]:
        """The completed items: the final response's ``output`` (the API's own word),
        else the items each ``output_item.done`` event carried, in output order."""
        output = self.final.get("output") if self.final is not None else None
        if isinstance(output, list) and output:
            return output
        items: list[Any] = []
        for index in sorted(self.done.keys() | self.added.keys()):
            item = self.done.get(index)
            if item is None:
                # Begun and never reported done (a proxy that sends only deltas): the
                # call with its argument deltas joined.
                item = dict(self.added[index])
                if item.get("type") == "function_call":
                    joined = self.arguments.get(str(item.get("id")), [])
                    item["arguments"] = str(item.get("arguments") or "") + "".join(joined)
            items.append(item)
        return items

    def malformed(self, data: str) -> ModelError:
        return ERRORS.transient(
            self.route,
            f"{self.route.provider} sent an event this plugin cannot read: "
            f"{redact(data.strip())[:200]!r}",
            reason="malformed stream event",
            partial=self.partial(),
        )

    def partial(self) -> Response:
        """What arrived before a failure: the completed items, then the text and
        thinking of the items still streaming."""
        try:
            converted = convert_items(
                [self.done[i] for i in sorted(self.done)], hide_thinking=self.hide_thinking
            )
        except ValueError:  # an item the neutral model refuses: keep the deltas only
            converted = Converted()
        blocks: list[Block] = list(converted.blocks)
        thought = "".join(self.thinking)
        shown = sum(
            len(reasoning_text(i)) for i in self.done.values() if i.get("type") == "reasoning"
        )
        if thought[shown:].strip():
            blocks.append(ThinkingBlock(text="" if self.hide_thinking else thought[shown:]))
        text = "".join(self.text)
        done_text = sum(len(b.text) for b in blocks if isinstance(b, TextBlock))
        if text[done_text:]:
            blocks.append(TextBlock(text=text[done_text:]))
        return Response(
            message=Message(role="assistant", content=blocks, model=self.route.name),
            stop_reason="other",
            usage=estimated_usage(0, len(text) + len(thought)),
            model=self.route.name,
        )


async def stream_responses(
    route: Route, request: Request, client: CallContext, key: str | None
) -> AsyncIterator[Event]:
    """The events of one call, ending with exactly one Done."""
    body = build_body(request, route, HTTP.options(client))
    payload = json.dumps(body, ensure_ascii=False).encode()
    headers = request_headers(route, key, client.settings)
    url = f"{route.endpoint.base_url}/responses"
    async with HTTP.stream(client, route, url, body=payload, headers=headers) as answer:
        skipped = unsupported_fields(request, route)
        if skipped:
            yield Notice(
                kind="unsupported_fields",
                message=f"{route.name} (Responses API) takes no {', '.join(skipped)}; "
                "left out of the request",
            )
        acc = Accumulator(route, request)
        answer.partial = acc.partial
        if answer.whole is not None:
            # A server that ignored stream=true: its whole response is the end.
            for event in acc.event("response.completed", _as_final(answer.whole)):
                yield event
        else:
            text = acc.text
            framer = SSEFramer()
            feed = framer.feed
            # One scanner per stream (its memo is not shared); typeshed does not declare it.
            scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
            text_delta = TextDelta.of  # bound once: a classmethod binds on every call
            async for chunk in answer:
                for name, data in feed(chunk):
                    if name == TEXT_DELTA:
                        # The hot path: one scan of the JSON (json.loads would add two
                        # whitespace regex matches), the delta, the event.
                        try:
                            obj, end = scan(data, 0)
                            delta = obj["delta"]
                        except (StopIteration, ValueError, KeyError, TypeError):
                            delta = end = None
                        if type(delta) is str and end == len(data):
                            if delta:
                                text.append(delta)
                                yield text_delta(delta)
                            continue
                        # Anything odd is read in full, and reported there.
                    for event in acc.event(name, data):
                        yield event
            if acc.final is None:
                for name, data in framer.close():
                    for event in acc.event(name, data):
                        yield event
        if acc.final is None:
            raise ERRORS.transient(
                route,
                f"the stream from {route.provider} ended before its final event "
                "(no response.completed, response.incomplete or response.failed)",
                reason="the stream ended early",
                partial=acc.partial(),
            )
        try:
            events = _finish(route, acc, len(payload), answer.headers)
        except ValueError:  # an item the neutral model refuses (pydantic's error is one)
            raise acc.malformed(json.dumps(acc.output_items())[:400]) from None
        for event in events:
            yield event


def _as_final(body: bytes) -> str:
    """A whole (non-streamed) response as the data of the final event it would have
    streamed."""
    text = body.decode("utf-8", "replace")
    try:
        whole = json.loads(text)
    except ValueError:
        return text  # read as malformed by the accumulator
    return json.dumps({"type": "response.completed", "response": whole})


def _finish(route: Route, acc: Accumulator, sent: int, headers: Mapping[str, str]) -> list[Event]:
    final = acc.final or {}
    status = final.get("status")
    details = final.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, Mapping) else None
    converted = convert_items(
        acc.output_items(), hide_thinking=acc.hide_thinking, cut=status == "incomplete"
    )
    if not converted.blocks and acc.text:
        # A server whose final event lists no output and that sent no item events.
        converted.blocks.append(TextBlock(text="".join(acc.text)))
    events: list[Event] = []
    metadata: dict[str, Any] = {}
    response_id = final.get("id")
    if isinstance(response_id, str):
        metadata["response_id"] = response_id
    served = final.get("model") or acc.served_model
    if isinstance(served, str) and served and served != route.model:
        metadata["served_model"] = served
    tier = final.get("service_tier")
    if isinstance(tier, str):
        metadata["service_tier"] = tier
    limits = {k.lower(): v for k, v in headers.items() if k.lower().startswith("x-ratelimit-")}
    if limits:
        metadata["rate_limits"] = limits
    if converted.repairs:
        metadata["tool_call_repairs"] = converted.repairs
    if converted.truncated_calls:
        metadata["truncated_tool_calls"] = converted.truncated_calls
        names = ", ".join(t["name"] or "?" for t in converted.truncated_calls)
        events.append(
            Notice(
                kind="truncated_tool_call",
                message=f"the output hit max_output_tokens inside the arguments of {names}; "
                "the call was not complete and is not returned as a tool call",
            )
        )
    usage = usage_from_responses(final.get("usage"))
    if usage is None:
        got = sum(len(b.text) for b in converted.blocks if isinstance(b, TextBlock))
        usage = estimated_usage(sent, got + len("".join(acc.thinking)))
    if converted.web_searches:
        usage = usage.model_copy(update={"web_searches": converted.web_searches})
    events.append(
        Done(
            response=Response(
                message=Message(role="assistant", content=converted.blocks, model=route.name),
                stop_reason=stop_reason(status, reason, converted),
                usage=usage,
                model=route.name,
                metadata=metadata,
            )
        )
    )
    return events
