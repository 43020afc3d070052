"""One Messages API stream's events, checked and assembled into the final message.

The SDK's own accumulator rebuilds a snapshot on every event (a string copy per text
delta, a partial JSON parse of the whole tool input per JSON delta), which makes a long
answer cost time quadratic in its length. Here every block keeps its pieces in a list
that is joined once, at the end: reading a stream costs time linear in its length.

The reader checks what it is fed, since Anthropic-compatible servers and proxies send
streams the API never would. Anything it cannot use raises :class:`Problem`, whose text
says what was wrong; the caller turns it into a classified error with the partial
output. The rules (each one a real server's habit, see the plugin's README):

- an event names itself by its JSON ``type``; the SSE ``event:`` line may be missing;
- ``ping`` and event or delta types this reader does not know are skipped;
- a block is known by its ``index``: blocks start in index order, but the first may be
  1 and an index may be skipped (the content is the blocks in index order);
- ``message_start`` opens the message; a second one before any block replaces the
  first (a proxy that repeats the frame), after a block it is a spliced stream;
- usage is message_start's, overwritten by each message_delta's cumulative counts (a
  server may send it only in message_delta);
- the message is complete at ``message_stop``, or when the stream ends after a
  message_delta that gave the stop reason (gateways that leave message_stop out); a
  block still open at ``message_stop`` ends there, its content kept (as the SDK does);
- at ``max_tokens`` (or when its block never closed) a tool call whose JSON is not
  whole is not returned as a call: it is listed in
  ``Response.metadata["truncated_tool_calls"]`` with a Notice; a closed call whose JSON
  is broken goes through the kit's one loose-JSON repair (the raw string when that
  fails, as openai-compat does).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from modelplug import (
    Event,
    Notice,
    Response,
    Route,
    TextDelta,
    ThinkingDelta,
    ToolCallStart,
    Usage,
    estimate_tokens,
    parse_arguments,
)
from modelplug_kit import usage_from_anthropic

from .mapping import from_wire_message

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["MessageReader", "Problem", "SplicedStream"]

# Blocks whose input arrives as input_json_delta pieces (tool_use, server_tool_use,
# mcp_tool_use, ...): every block that is neither text nor thinking.
_TEXT = "text"
_THINKING = "thinking"
_REDACTED = "redacted_thinking"


class Problem(ValueError):
    """An event this reader cannot use; the message says what is wrong with it."""


class SplicedStream(Problem):
    """A second message_start after the first message had content: two answers in one
    stream (a proxy that retried upstream and kept writing to the same response)."""


class _Block:
    """One content block: the vendor block from content_block_start and its pieces."""

    __slots__ = ("citations", "index", "kind", "pieces", "signature", "start", "stopped")

    def __init__(self, index: int, start: dict[str, Any]) -> None:
        self.index = index
        self.start = start
        self.kind: str = start["type"]
        self.pieces: list[str] = []
        self.signature: str | None = None
        self.citations: list[dict[str, Any]] | None = None
        self.stopped = False

    def wire(self) -> dict[str, Any]:
        """The whole block as the API would have sent it in a message."""
        block = dict(self.start)
        if self.kind == _TEXT:
            block["text"] = (block.get("text") or "") + "".join(self.pieces)
            if self.citations is not None:
                block["citations"] = [*(block.get("citations") or []), *self.citations]
        elif self.kind == _THINKING:
            block["thinking"] = (block.get("thinking") or "") + "".join(self.pieces)
            if self.signature is not None:
                block["signature"] = self.signature
        return block

    @property
    def arguments(self) -> str:
        return "".join(self.pieces)


def _index(event: Mapping[str, Any]) -> int:
    index = event.get("index")
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise Problem(f"a {event.get('type')} event without a valid block index")
    return index


def _check_start(index: int, start: dict[str, Any]) -> None:
    """The fields of a started block that the Response is built from have their types."""
    kind = start["type"]
    if "input" in start and not isinstance(start["input"], dict):
        raise Problem(f"a {kind} block {index} whose input is not an object")
    citations = start.get("citations")
    if citations is not None and not (
        isinstance(citations, list) and all(isinstance(c, dict) for c in citations)
    ):
        raise Problem(f"a {kind} block {index} whose citations are not a list of objects")
    signature = start.get("signature")
    if signature is not None and not isinstance(signature, str):
        raise Problem(f"a {kind} block {index} whose signature is not text")


def _mapping(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Problem(f"{what} that is not a JSON object")
    return value


class MessageReader:
    """Feed it each event (a parsed JSON object); it returns the events to show.

    :param route: the route, for names in the Response.
    :param hide_thinking: no ThinkingDelta events, blank thinking text in the Response.
    :param sent_chars: the request body's length, for an estimate when no usage came.
    """

    def __init__(self, route: Route, *, hide_thinking: bool, sent_chars: int = 0) -> None:
        self.route = route
        self.hide_thinking = hide_thinking
        self.sent_chars = sent_chars
        self.message: dict[str, Any] | None = None
        self.blocks: dict[int, _Block] = {}
        self.usage: dict[str, Any] = {}
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None
        self.stopped = False  # message_stop arrived
        self._handlers: dict[str, Callable[[dict[str, Any]], list[Event]]] = {
            "message_start": self._message_start,
            "content_block_start": self._block_start,
            "content_block_delta": self._block_delta,
            "content_block_stop": self._block_stop,
            "message_delta": self._message_delta,
            "message_stop": self._message_stop,
        }

    # -- feeding -------------------------------------------------------------------------

    def text_block(self, index: Any) -> list[str] | None:
        """The pieces of the open text block at ``index``, else None (the hot path's
        check: a text delta goes straight into this list)."""
        block = self.blocks.get(index) if type(index) is int else None
        if block is None or block.kind != _TEXT or block.stopped:
            return None
        return block.pieces

    def feed(self, event: Any) -> list[Event]:
        """Read one event; returns what to show for it."""
        event = _mapping(event, "an event")
        kind = event.get("type")
        if not isinstance(kind, str):
            raise Problem("an event without a type")
        handler = self._handlers.get(kind)
        if handler is None:
            return []  # ping, and event types this reader does not know
        if self.stopped:
            raise Problem(f"a {kind} event after message_stop")
        if self.message is None and kind != "message_start":
            raise Problem(f"a {kind} event before message_start")
        return handler(event)

    def _message_start(self, event: dict[str, Any]) -> list[Event]:
        message = _mapping(event.get("message"), "a message_start whose message is")
        if self.message is not None and self.blocks:
            first, second = self.message.get("id"), message.get("id")
            raise SplicedStream(
                f"a second message_start ({second!r}) after message {first!r} had begun: "
                "two answers spliced into one stream"
            )
        self.message = message
        usage = message.get("usage")
        self.usage = dict(usage) if isinstance(usage, dict) else {}
        return []

    def _block_start(self, event: dict[str, Any]) -> list[Event]:
        index = _index(event)
        if index in self.blocks:
            raise Problem(f"a second content_block_start for block {index}")
        last = max(self.blocks, default=-1)
        if index < last:
            # Blocks start in index order, so the order shown is the final order; the
            # first may be 1 and an index may be skipped (blocks are read by index).
            raise Problem(f"a content_block_start for block {index} after block {last}")
        start = _mapping(event.get("content_block"), "a content_block_start whose block is")
        if not isinstance(start.get("type"), str):
            raise Problem(f"a content_block_start for block {index} without a block type")
        _check_start(index, start)
        block = self.blocks[index] = _Block(index, start)
        if block.kind == "tool_use":
            call_id, name = start.get("id"), start.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str) or not name:
                raise Problem(f"a tool_use block {index} without a string id and name")
            return [ToolCallStart(id=call_id, name=name, index=index)]
        # A server may put the first words in the start itself: shown like a delta, so
        # what was shown is always the final text.
        if block.kind == _TEXT:
            text = start.get("text", "")
            if not isinstance(text, str):
                raise Problem(f"a text block {index} whose text is not a string")
            return [TextDelta.of(text)] if text else []
        if block.kind == _THINKING:
            thought = start.get("thinking", "")
            if not isinstance(thought, str):
                raise Problem(f"a thinking block {index} whose thinking is not a string")
            if thought and not self.hide_thinking:
                return [ThinkingDelta(text=thought)]
        return []

    def _open_block(self, event: dict[str, Any]) -> _Block:
        index = _index(event)
        block = self.blocks.get(index)
        if block is None:
            raise Problem(f"a {event['type']} for block {index}, which never started")
        if block.stopped:
            raise Problem(f"a {event['type']} for block {index} after its content_block_stop")
        return block

    def _block_delta(self, event: dict[str, Any]) -> list[Event]:
        block = self._open_block(event)
        delta = _mapping(event.get("delta"), "a content_block_delta whose delta is")
        kind = delta.get("type")
        if kind == "text_delta":
            text = self._piece(delta, "text", block, _TEXT)
            if text:
                block.pieces.append(text)
                return [TextDelta.of(text)]
        elif kind == "thinking_delta":
            text = self._piece(delta, "thinking", block, _THINKING)
            if text:
                block.pieces.append(text)
                if not self.hide_thinking:
                    return [ThinkingDelta(text=text)]
        elif kind == "signature_delta":
            block.signature = self._piece(delta, "signature", block, _THINKING)
        elif kind == "input_json_delta":
            if block.kind in (_TEXT, _THINKING, _REDACTED):
                raise Problem(f"an input_json_delta for block {block.index}, a {block.kind} block")
            piece = delta.get("partial_json")
            if not isinstance(piece, str):
                raise Problem(f"an input_json_delta for block {block.index} without text")
            if piece:
                block.pieces.append(piece)
        elif kind == "citations_delta":
            citation = _mapping(delta.get("citation"), "a citations_delta whose citation is")
            if block.kind != _TEXT:
                raise Problem(f"a citations_delta for block {block.index}, a {block.kind} block")
            if block.citations is None:
                block.citations = []
            block.citations.append(citation)
        return []

    @staticmethod
    def _piece(delta: dict[str, Any], field: str, block: _Block, wanted: str) -> str:
        if block.kind != wanted:
            raise Problem(f"a {delta['type']} for block {block.index}, a {block.kind} block")
        value = delta.get(field)
        if not isinstance(value, str):
            raise Problem(f"a {delta['type']} for block {block.index} whose {field} is not text")
        return value

    def _block_stop(self, event: dict[str, Any]) -> list[Event]:
        self._open_block(event).stopped = True
        return []

    def _message_delta(self, event: dict[str, Any]) -> list[Event]:
        delta = event.get("delta")
        if delta is not None:
            delta = _mapping(delta, "a message_delta whose delta is")
            reason = delta.get("stop_reason")
            if isinstance(reason, str) and reason:
                self.stop_reason = reason
            sequence = delta.get("stop_sequence")
            if isinstance(sequence, str):
                self.stop_sequence = sequence
        usage = event.get("usage")
        if isinstance(usage, dict):
            # Cumulative counts: each one given replaces message_start's; one left out
            # (or null) keeps it.
            self.usage.update((k, v) for k, v in usage.items() if v is not None)
        return []

    def _message_stop(self, event: dict[str, Any]) -> list[Event]:
        # The message is over, with every block seen: one still open ends here, as the
        # anthropic SDK's accumulator reads it (its out_of_order_response fixture has
        # message_stop while block 1 is open). Its text and thinking are kept; a tool
        # call whose JSON is not whole is listed as truncated (finish), never run.
        self.stopped = True
        return []

    # -- the end -------------------------------------------------------------------------

    @property
    def complete(self) -> bool:
        """The server said the message is done (message_stop, or a stop reason)."""
        return self.stopped or (self.message is not None and self.stop_reason is not None)

    def finish(self) -> tuple[Response, list[Event]]:
        """The final Response and the events that go before its Done (a Notice for a
        tool call cut off by max_tokens)."""
        cut = self.stop_reason in ("max_tokens", "model_context_window_exceeded")
        content: list[dict[str, Any]] = []
        truncated: list[dict[str, Any]] = []
        repairs: dict[str, list[str]] = {}
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.kind in (_TEXT, _THINKING, _REDACTED):
                content.append(block.wire())
                continue
            wire = dict(block.start)
            raw = block.arguments
            if raw or not block.stopped:
                value: Any
                if cut or not block.stopped:
                    try:
                        value = json.loads(raw) if raw.strip() else {}
                    except ValueError:
                        value = None
                    if not isinstance(value, dict):
                        truncated.append(
                            {"id": wire.get("id"), "name": wire.get("name"), "arguments": raw}
                        )
                        continue
                else:
                    value, applied = parse_arguments(raw)
                    if applied:
                        repairs[str(wire.get("id"))] = applied
                wire["input"] = value
            content.append(wire)
        response = self._response(content, self.stop_reason)
        events: list[Event] = []
        metadata = dict(response.metadata)
        if truncated:
            metadata["truncated_tool_calls"] = truncated
            names = ", ".join(str(t["name"] or "?") for t in truncated)
            where = "the output hit max_tokens" if cut else "the call's block never closed"
            events.append(
                Notice(
                    kind="truncated_tool_call",
                    message=f"{where} inside the arguments of {names}; the call was not "
                    "complete and is not returned as a tool call."
                    + (" Raise max_tokens." if cut else ""),
                )
            )
        if repairs:
            metadata["tool_call_repairs"] = repairs
        if metadata != response.metadata:
            response = response.model_copy(update={"metadata": metadata})
        return response, events

    def partial(self) -> Response | None:
        """What arrived before a failure: every finished block and any text, so a
        half-written thinking block or tool call is never kept as if it were whole."""
        if self.message is None:
            return None
        content = [
            block.wire()
            for index, block in sorted(self.blocks.items())
            if block.kind in (_TEXT, _THINKING, _REDACTED)
            and (block.stopped or (block.kind == _TEXT and block.pieces))
        ]
        if not content:
            return None
        return self._response(content, None)

    def _response(self, content: list[dict[str, Any]], stop_reason: str | None) -> Response:
        message = self.message or {}
        data = {
            "id": message.get("id") if isinstance(message.get("id"), str) else None,
            "model": message.get("model"),
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": self.stop_sequence,
        }
        usage = usage_from_anthropic(self.usage) if self.usage else None
        if usage is None:
            got = sum(
                len(v)
                for b in content
                for k in ("text", "thinking")
                if isinstance(v := b.get(k), str)
            )
            usage = Usage(
                input=estimate_tokens(self.sent_chars),
                output=estimate_tokens(got),
                reported=False,
            )
        return from_wire_message(data, self.route, hide_thinking=self.hide_thinking, usage=usage)
