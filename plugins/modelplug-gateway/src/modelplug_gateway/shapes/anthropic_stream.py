"""modelplug's events written as the Messages API's server-sent events.

Each event goes out as it arrives: ``message_start`` with the first event (before
thinking ends), a content block per run of text or thinking, a ``tool_use`` block at
each ToolCallStart. What only the final Response knows is written when Done comes: a
thinking block's signature (``signature_delta``), a tool call's input (one
``input_json_delta`` with the whole JSON: modelplug has no event for input pieces),
blocks that were never streamed (redacted thinking, server-tool blocks), then
``message_delta`` with the stop reason, usage and the call's ``timings``, and
``message_stop``. So a thinking block and a tool call stay open until then while later
blocks stream at their own indices; the SDKs read blocks by index, so the message they
build is the API's.

A ModelplugError after the first frame becomes ``event: error`` (its type from
:mod:`modelplug_gateway.errors`) and ends the stream; one raised before any frame
propagates, so the app can still answer with a status.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from modelplug import (
    Done,
    ModelplugError,
    Notice,
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
from .anthropic_answer import block_json, stop_reason, stop_sequence, usage_json

__all__ = ["write_stream"]

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_PING = b'event: ping\ndata: {"type":"ping"}\n\n'
_MESSAGE_STOP = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'


def frame(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {_dumps(data)}\n\n".encode()


def _text_frame(index: int, text: str) -> bytes:
    # The hot path: one frame per text delta, built without a dict.
    return (
        f'event: content_block_delta\ndata: {{"type":"content_block_delta","index":{index},'
        f'"delta":{{"type":"text_delta","text":{_dumps(text)}}}}}\n\n'
    ).encode()


class _Open:
    """A content block the stream started: its kind, index, and what was shown."""

    __slots__ = ("closed", "id", "index", "kind", "shown")

    def __init__(self, kind: str, index: int, call_id: str | None = None) -> None:
        self.kind = kind
        self.index = index
        self.id = call_id
        self.shown: list[str] = []
        self.closed = False


class _Writer:
    def __init__(self) -> None:
        self.blocks: list[_Open] = []
        self.text: _Open | None = None  # the text block deltas go to now
        self.thinking: _Open | None = None  # the thinking block deltas go to now

    def start(
        self, kind: str, content_block: dict[str, Any], call_id: str | None = None
    ) -> tuple[_Open, bytes]:
        block = _Open(kind, len(self.blocks), call_id)
        self.blocks.append(block)
        data = {"type": "content_block_start", "index": block.index, "content_block": content_block}
        return block, frame("content_block_start", data)

    @staticmethod
    def stop(block: _Open) -> bytes:
        block.closed = True
        return frame("content_block_stop", {"type": "content_block_stop", "index": block.index})

    def end_runs(self) -> bytes:
        """A new block begins: the text run ends (a thinking run only stops taking
        deltas; its block closes once its signature is known)."""
        out = b""
        if self.text is not None:
            out = self.stop(self.text)
            self.text = None
        self.thinking = None
        return out

    def text_delta(self, text: str) -> bytes:
        if self.text is None:
            head = self.end_runs()
            self.text, opened = self.start("text", {"type": "text", "text": ""})
            head += opened
        else:
            head = b""
        self.text.shown.append(text)
        return head + _text_frame(self.text.index, text)

    def thinking_delta(self, text: str) -> bytes:
        head = b""
        if self.thinking is None:
            head = self.end_runs()
            self.thinking, opened = self.start(
                "thinking", {"type": "thinking", "thinking": "", "signature": ""}
            )
            head += opened
        self.thinking.shown.append(text)
        delta = {"type": "thinking_delta", "thinking": text}
        return head + self._delta(self.thinking, delta)

    def tool_start(self, event: ToolCallStart) -> bytes:
        head = self.end_runs()
        content = {"type": "tool_use", "id": event.id, "name": event.name, "input": {}}
        _, opened = self.start("tool_use", content, event.id)
        return head + opened

    @staticmethod
    def _delta(block: _Open, delta: dict[str, Any]) -> bytes:
        data = {"type": "content_block_delta", "index": block.index, "delta": delta}
        return frame("content_block_delta", data)

    def _take(self, kind: str, call_id: str | None = None) -> _Open | None:
        """The first streamed block of ``kind`` not yet matched to a final block."""
        for block in self.blocks:
            if block.kind == kind and block.id != "" and (call_id is None or block.id == call_id):
                return block
        return None

    def _claim(self, block: _Open) -> None:
        block.id = ""  # matched: never taken again

    def finish(self, response: Response) -> bytes:
        """Everything only the final Response knows, then the message's end."""
        self.text = self.thinking = None
        out: list[bytes] = []
        for final in response.message.content:
            if isinstance(final, TextBlock):
                out.append(self._final_text(final))
            elif isinstance(final, ThinkingBlock):
                out.append(self._final_thinking(final))
            elif isinstance(final, ToolUseBlock):
                out.append(self._final_tool(final))
            elif isinstance(final, OpaqueBlock):
                whole = block_json(final)
                if whole is not None:
                    block, opened = self.start(final.kind, whole)
                    out += (opened, self.stop(block))
        out += [self.stop(b) for b in self.blocks if not b.closed]
        usage: dict[str, Any] = usage_json(response.usage)
        cost = response.cost
        if cost is not None and cost.currency == "USD":
            usage["modelplug_cost_usd"] = str(cost.amount)
        delta = {"stop_reason": stop_reason(response), "stop_sequence": stop_sequence(response)}
        # The timings are known only now: on the last event that says anything.
        ending = {"type": "message_delta", "delta": delta, "usage": usage}
        out.append(frame("message_delta", {**ending, **timings_field(response)}))
        out.append(_MESSAGE_STOP)
        return b"".join(out)

    def _final_text(self, final: TextBlock) -> bytes:
        block = self._take("text")
        if block is None:
            if not final.text:
                return b""
            block, opened = self.start("text", {"type": "text", "text": ""})
            return opened + _text_frame(block.index, final.text) + self.stop(block)
        self._claim(block)
        shown = "".join(block.shown)
        if not block.closed and len(final.text) > len(shown) and final.text.startswith(shown):
            # Text the stream held back (a reader that waited to see a tool call).
            return _text_frame(block.index, final.text[len(shown) :])
        return b""

    def _final_thinking(self, final: ThinkingBlock) -> bytes:
        whole = block_json(final)
        if whole is None:
            return b""
        if whole["type"] == "redacted_thinking":
            redacted, opened = self.start("redacted_thinking", whole)
            return opened + self.stop(redacted)
        block = self._take("thinking")
        head = b""
        if block is None:
            block, head = self.start(
                "thinking", {"type": "thinking", "thinking": "", "signature": ""}
            )
            if whole.get("thinking"):
                head += self._delta(
                    block, {"type": "thinking_delta", "thinking": whole["thinking"]}
                )
        self._claim(block)
        signature = whole.get("signature")
        if isinstance(signature, str) and signature:
            head += self._delta(block, {"type": "signature_delta", "signature": signature})
        return head + self.stop(block)

    def _final_tool(self, final: ToolUseBlock) -> bytes:
        whole = block_json(final) or {}
        block = self._take("tool_use", final.id)
        head = b""
        if block is None:
            block, head = self.start(
                "tool_use", {"type": "tool_use", "id": final.id, "name": final.name, "input": {}}
            )
        self._claim(block)
        arguments = _dumps(whole.get("input", {}))
        delta = {"type": "input_json_delta", "partial_json": arguments}
        return head + self._delta(block, delta) + self.stop(block)


def _message_start(model: str) -> bytes:
    message: dict[str, Any] = {
        "id": "msg_" + uuid.uuid4().hex[:24],
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }
    return frame("message_start", {"type": "message_start", "message": message})


def error_frame(error_type: str, message: str) -> bytes:
    return frame("error", {"type": "error", "error": {"type": error_type, "message": message}})


async def write_stream(events: AsyncIterator[Any], model: str) -> AsyncIterator[bytes]:
    """The SSE frames for ``events``; ``model`` is the name the caller gave."""
    writer = _Writer()
    started = False
    try:
        async for event in events:
            if not started:
                started = True
                yield _message_start(model)
            if type(event) is TextDelta:
                if event.text:
                    yield writer.text_delta(event.text)
            elif isinstance(event, ThinkingDelta):
                if event.text:
                    yield writer.thinking_delta(event.text)
            elif isinstance(event, ToolCallStart):
                yield writer.tool_start(event)
            elif isinstance(event, Done):
                yield writer.finish(event.response)
                return
            elif isinstance(event, Notice):
                # A retry wait or a fallback switch: the stream is alive, say so.
                yield _PING
            elif isinstance(event, TextDelta):
                yield writer.text_delta(event.text)
    except ModelplugError as error:
        if not started:
            raise
        failure = failure_for(error, "anthropic")
        assert failure is not None  # every ModelplugError has its answer
        yield error_frame(failure.type, failure.message)
        return
    if not started:
        yield _message_start(model)
    yield error_frame("api_error", "the model's stream ended without its final answer")
