"""modelplug's events written as the Responses API's server-sent events, in OpenAI's
order.

``response.created`` and ``response.in_progress`` go out with the first event. Text
streams as a ``message`` item (``output_item.added``, ``content_part.added``, then
``output_text.delta`` as it arrives), reasoning as a ``reasoning`` item of one summary
part (``reasoning_summary_text.delta``), a call as a ``function_call`` item opened at
its ToolCallStart. A text item closes (``output_text.done``, ``content_part.done``,
``output_item.done``) when another item begins. What only the final Response knows is
written when Done comes, in the answer's order: a reasoning item's encrypted content
(its ``output_item.done``), a call's arguments (one ``function_call_arguments.delta``
with the whole JSON, then ``.done``: modelplug has no event for argument pieces), items
that were never streamed; then ``response.completed`` (``response.incomplete`` when
cut at max_output_tokens) with every item and the usage.

A streamed reasoning item of an OpenAI upstream keeps the id it was opened with (the
upstream's own is known only at Done, and a client's item must keep its id from
``added`` to ``done``); its encrypted content is the upstream's.

A ModelplugError after the first frame becomes an ``error`` event and a
``response.failed`` (its code from :mod:`modelplug_gateway.errors`); one raised before
any frame propagates, so the app can still answer with a status.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from modelplug import (
    Done,
    ModelplugError,
    OpaqueBlock,
    Response,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallStart,
    ToolUseBlock,
)

from ..call_timings import timings_field
from ..errors import failure_for
from .base import Parsed
from .reasoning_items import is_reasoning, reasoning_item
from .responses_answer import (
    function_call_item,
    new_id,
    own_annotations,
    request_fields,
    status_of,
    usage_json,
)
from .responses_request import arguments_json

__all__ = ["write_stream"]

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_TEXT_FORMAT = {"format": {"type": "text"}}


def _json(value: Any) -> str:
    """``value`` as JSON, the values a request restates most often without the encoder's
    set-up (a string is encoded by its fast path)."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, str):
        return _dumps(value)
    if value == _TEXT_FORMAT:
        return '{"format":{"type":"text"}}'
    if not value and isinstance(value, dict | list):
        return "{}" if isinstance(value, dict) else "[]"
    return _dumps(value)


class _Item:
    """An output item the stream opened: its index, id, kind and what was shown."""

    __slots__ = ("call_id", "closed", "id", "index", "kind", "shown")

    def __init__(self, kind: str, index: int, item_id: str, call_id: str | None = None) -> None:
        self.kind = kind
        self.index = index
        self.id = item_id
        self.call_id = call_id
        self.shown: list[str] = []
        self.closed = False


class _Writer:
    def __init__(self, model: str, parsed: Parsed) -> None:
        self.model = model
        self.echo = parsed.echo
        self.encrypted = bool(self.echo.get("encrypted"))
        self.id = new_id("resp_")
        self.created_at = int(time.time())
        fields = request_fields(model, self.echo)
        self.restated = ",".join(f'"{key}":{_json(value)}' for key, value in fields.items())
        self.sequence = 0
        self.items: list[_Item] = []
        self.final: dict[int, str] = {}  # output_index -> the item as done, encoded
        self.text: _Item | None = None  # the message item text goes to now
        self.thinking: _Item | None = None  # the reasoning item deltas go to now

    def event(self, name: str, data: dict[str, Any]) -> bytes:
        # The fields after the two every event has, spliced in as encoded (no merged dict).
        return self.frame(name, _dumps(data)[1:-1])

    def frame(self, name: str, fields: str) -> bytes:
        """One event whose other fields are ``fields``, already JSON (``"a":1,"b":2``)."""
        sequence = self.sequence
        self.sequence += 1
        return (
            f'event: {name}\ndata: {{"type":"{name}","sequence_number":{sequence},{fields}}}\n\n'
        ).encode()

    def _response(
        self,
        status: str,
        usage: dict[str, Any] | None = None,
        incomplete: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        timings: dict[str, Any] | None = None,
    ) -> str:
        """``"response":{...}``: the response object as it stands, encoded (what it
        restates of the request, and each item, encoded once a stream)."""
        output = ",".join(self.final[i] for i in sorted(self.final))
        timed = f'"timings":{_dumps(timings)},' if timings else ""
        return (
            f'"response":{{"id":"{self.id}","object":"response","created_at":{self.created_at},'
            f'"status":"{status}","error":{_dumps(error) if error else "null"},'
            f'"incomplete_details":{_dumps(incomplete) if incomplete else "null"},'
            f'"output":[{output}],"usage":{_usage(usage)},'
            f"{timed}"
            f"{self.restated}}}"
        )

    def begin(self) -> bytes:
        created = self._response("in_progress")
        return self.frame("response.created", created) + self.frame("response.in_progress", created)

    # ---------------------------------------------------------------- items

    def _open(
        self, kind: str, item: dict[str, Any], call_id: str | None = None
    ) -> tuple[_Item, bytes]:
        opened = _Item(kind, len(self.items), item["id"], call_id)
        self.items.append(opened)
        added = {"output_index": opened.index, "item": item}
        return opened, self.event("response.output_item.added", added)

    def _done(self, opened: _Item, item: dict[str, Any] | str) -> bytes:
        """The item's ``output_item.done`` (``item`` may come encoded), kept encoded for
        the response's ``output``."""
        encoded = item if isinstance(item, str) else _dumps(item)
        opened.closed = True
        self.final[opened.index] = encoded
        return self.frame(
            "response.output_item.done", f'"output_index":{opened.index},"item":{encoded}'
        )

    def _where(self, opened: _Item) -> dict[str, Any]:
        return {"item_id": opened.id, "output_index": opened.index}

    def end_runs(self) -> bytes:
        """Another item begins: the text item closes, a reasoning item's summary ends
        (the item itself closes at Done, when its encrypted content is known)."""
        out = b""
        if self.text is not None:
            out = self._close_text(self.text)
            self.text = None
        if self.thinking is not None:
            out += self._end_summary(self.thinking)
            self.thinking = None
        return out

    def _close_text(self, opened: _Item, annotations: list[dict[str, Any]] | None = None) -> bytes:
        # Every text answer ends here: the three events are written from one encoding
        # of the text and of the part.
        text = "".join(opened.shown)
        encoded = (
            f'{{"type":"output_text","text":{_dumps(text)},'
            f'"annotations":{_json(annotations or [])},"logprobs":[]}}'
        )
        where = f'"item_id":"{opened.id}","output_index":{opened.index},"content_index":0'
        item = (
            f'{{"id":"{opened.id}","type":"message","role":"assistant","status":"completed",'
            f'"content":[{encoded}]}}'
        )
        return (
            self.frame(
                "response.output_text.done",
                f'{where},"text":{_dumps(text)},"logprobs":[]',
            )
            + self.frame("response.content_part.done", f'{where},"part":{encoded}')
            + self._done(opened, item)
        )

    def _end_summary(self, opened: _Item) -> bytes:
        text = "".join(opened.shown)
        where = {**self._where(opened), "summary_index": 0}
        part = {"type": "summary_text", "text": text}
        return self.event("response.reasoning_summary_text.done", {**where, "text": text}) + (
            self.event("response.reasoning_summary_part.done", {**where, "part": part})
        )

    def text_delta(self, text: str) -> bytes:
        head = b""
        if self.text is None:
            head = self.end_runs() + self._open_text()
        assert self.text is not None
        self.text.shown.append(text)
        sequence = self.sequence
        self.sequence += 1
        return (
            head
            + (
                'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",'
                f'"sequence_number":{sequence},"item_id":"{self.text.id}",'
                f'"output_index":{self.text.index},"content_index":0,"delta":{_dumps(text)},'
                '"logprobs":[]}\n\n'
            ).encode()
        )

    def _open_text(self) -> bytes:
        opened = self.text = _Item("message", len(self.items), new_id("msg_"))
        self.items.append(opened)
        return self.frame(
            "response.output_item.added",
            f'"output_index":{opened.index},"item":{{"id":"{opened.id}","type":"message",'
            '"role":"assistant","status":"in_progress","content":[]}',
        ) + self.frame(
            "response.content_part.added",
            f'"item_id":"{opened.id}","output_index":{opened.index},"content_index":0,'
            '"part":{"type":"output_text","text":"","annotations":[],"logprobs":[]}',
        )

    def thinking_delta(self, text: str) -> bytes:
        head = b""
        if self.thinking is None:
            head = self.end_runs()
            item = {"id": new_id("rs_"), "type": "reasoning", "summary": []}
            self.thinking, added = self._open("reasoning", item)
            part = {"type": "summary_text", "text": ""}
            where = {**self._where(self.thinking), "summary_index": 0}
            head += added + self.event(
                "response.reasoning_summary_part.added", {**where, "part": part}
            )
        self.thinking.shown.append(text)
        where = {**self._where(self.thinking), "summary_index": 0}
        return head + self.event("response.reasoning_summary_text.delta", {**where, "delta": text})

    def tool_start(self, event: ToolCallStart) -> bytes:
        head = self.end_runs()
        item = function_call_item(new_id("fc_"), event.id, event.name, "", "in_progress")
        _, added = self._open("function_call", item, event.id)
        return head + added

    # ---------------------------------------------------------------- the end

    def _take(self, kind: str, call_id: str | None = None) -> _Item | None:
        """The first streamed item of ``kind`` not yet matched to a final block."""
        for opened in self.items:
            if opened.kind == kind and not opened.closed and opened.call_id == call_id:
                return opened
        return None

    def finish(self, response: Response) -> bytes:
        """Everything only the final Response knows, then the response's end."""
        texts = [b for b in response.message.content if isinstance(b, TextBlock)]
        out = [self._held_back(texts), self.end_runs()]
        route = response.model or response.message.model
        streamed_text = any(o.kind == "message" for o in self.items)
        for block in response.message.content:
            if isinstance(block, ToolUseBlock):
                out.append(self._final_call(block))
            elif isinstance(block, ThinkingBlock | OpaqueBlock):
                out.append(self._final_reasoning(block, route))
        if not streamed_text and any(b.text for b in texts):
            out.append(self._final_text(texts))
        out += [self._unmatched(o) for o in self.items if not o.closed]
        status, incomplete = status_of(response)
        name = "response.completed" if status == "completed" else "response.incomplete"
        usage = usage_json(response.usage)
        timings = timings_field(response).get("timings")  # known only at the end
        out.append(self.frame(name, self._response(status, usage, incomplete, timings=timings)))
        return b"".join(out)

    def _held_back(self, texts: list[TextBlock]) -> bytes:
        """The end of the text a stream held back (a reader that waited to see whether
        a tool call began), as one more delta."""
        if self.text is None:
            return b""
        shown = "".join(self.text.shown)
        whole = "".join(b.text for b in texts)
        if len(whole) > len(shown) and whole.startswith(shown):
            return self.text_delta(whole[len(shown) :])
        return b""

    def _unmatched(self, opened: _Item) -> bytes:
        """An item the stream opened that the final answer has no block for: closed
        as far as it got, so the client's response is whole."""
        if opened.kind == "function_call":
            item = function_call_item(opened.id, opened.call_id or "", "", "", "incomplete")
        else:
            item = {"id": opened.id, "type": "reasoning", "summary": []}
            if opened.shown:
                item["summary"] = [{"type": "summary_text", "text": "".join(opened.shown)}]
        return self._done(opened, item)

    def _final_call(self, block: ToolUseBlock) -> bytes:
        arguments = arguments_json(block.input)
        opened = self._take("function_call", block.id)
        head = b""
        if opened is None:
            item = function_call_item(new_id("fc_"), block.id, block.name, "", "in_progress")
            opened, head = self._open("function_call", item, block.id)
        where = self._where(opened)
        return (
            head
            + self.event("response.function_call_arguments.delta", {**where, "delta": arguments})
            + self.event(
                "response.function_call_arguments.done",
                {**where, "name": block.name, "arguments": arguments},
            )
            + self._done(
                opened, function_call_item(opened.id, block.id, block.name, arguments, "completed")
            )
        )

    def _final_reasoning(self, block: ThinkingBlock | OpaqueBlock, route: str | None) -> bytes:
        if not is_reasoning(block):  # an OpenAI upstream's own item (a web search call)
            item = dict(block.wire or {})
            item.setdefault("id", new_id("ws_"))
            own, added = self._open(str(item.get("type")), item)
            return added + self._done(own, item)
        item = reasoning_item(block, route, self.encrypted)
        streamed = self._take("reasoning")
        if streamed is None:
            opened, added = self._open("reasoning", {**item, "encrypted_content": None})
            return added + self._done(opened, item)
        return self._done(streamed, {**item, "id": streamed.id})

    def _final_text(self, texts: list[TextBlock]) -> bytes:
        """Text no delta carried (a structured answer cut short): one message item."""
        out = self._open_text()
        assert self.text is not None
        opened, self.text = self.text, None
        whole = "".join(b.text for b in texts)
        opened.shown.append(whole)
        where = {**self._where(opened), "content_index": 0}
        delta = self.event("response.output_text.delta", {**where, "delta": whole, "logprobs": []})
        annotations = [a for b in texts for a in own_annotations(b.citations)]
        return out + delta + self._close_text(opened, annotations)

    def failed(self, code: str, message: str) -> bytes:
        error = {"code": code, "message": message}
        return self.event("error", {**error, "param": None}) + self.frame(
            "response.failed", self._response("failed", error=error)
        )


def _usage(usage: dict[str, Any] | None) -> str:
    """:func:`.responses_answer.usage_json`'s dict as JSON (plain counts: no encoder)."""
    if usage is None:
        return "null"
    cached = usage["input_tokens_details"]
    return (
        f'{{"input_tokens":{usage["input_tokens"]},"input_tokens_details":{{"cached_tokens":'
        f'{cached["cached_tokens"]},"cache_write_tokens":{cached["cache_write_tokens"]}}},'
        f'"output_tokens":{usage["output_tokens"]},"output_tokens_details":'
        f'{{"reasoning_tokens":{usage["output_tokens_details"]["reasoning_tokens"]}}},'
        f'"total_tokens":{usage["total_tokens"]}}}'
    )


async def write_stream(
    events: AsyncIterator[Any], model: str, parsed: Parsed
) -> AsyncIterator[bytes]:
    """The SSE frames for ``events`` (see the module docstring)."""
    writer = _Writer(model, parsed)
    started = finished = False
    try:
        async for event in events:
            if not started:
                started = True
                yield writer.begin()
            if isinstance(event, TextDelta):
                yield writer.text_delta(event.text)
            elif isinstance(event, ThinkingDelta):
                if event.text:
                    yield writer.thinking_delta(event.text)
            elif isinstance(event, ToolCallStart):
                yield writer.tool_start(event)
            elif isinstance(event, Done):
                # Read on to the end, not returned from: the events' generators then end
                # by themselves, rather than each being closed (a task apiece).
                finished = True
                yield writer.finish(event.response)
    except ModelplugError as error:
        if not started:
            raise
        failure = failure_for(error, "openai")
        assert failure is not None  # every ModelplugError has its answer
        yield writer.failed(failure.code, failure.message)
        return
    if finished:
        return
    if not started:
        yield writer.begin()
    yield writer.failed("server_error", "the model's stream ended without its final answer")
