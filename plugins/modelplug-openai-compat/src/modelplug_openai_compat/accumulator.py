"""Everything of one answer except the plain text fast path: reasoning, content parts,
tool calls, usage and the fields a server adds.

One :class:`Accumulator` per call. :meth:`Accumulator.event` reads one parsed chunk
in full and returns the events it shows; the stream reader calls it for every chunk
the fast path does not take.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from modelplug import (
    Block,
    Event,
    HeldText,
    Message,
    Request,
    Response,
    Route,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallStart,
    ToolUseBlock,
    estimated_usage,
    new_tool_use_id,
    parse_arguments,
    redact,
)

from .errors import http_error, status_in
from .request import REASONING_FIELDS

__all__ = ["KNOWN_FIELDS", "Accumulator"]

# Top-level chunk fields with a neutral home (or none worth keeping: OpenAI's random
# "obfuscation" padding); any other is kept in Response.metadata.
KNOWN_FIELDS = frozenset(
    {
        "id",
        "object",
        "created",
        "model",
        "choices",
        "usage",
        "system_fingerprint",
        "service_tier",
        "obfuscation",
    }
)
# Where Mistral's content parts put reasoning ({"type": "thinking", "thinking": [...]}).
THINKING_PART = "thinking"


class _Call:
    __slots__ = ("arguments", "id", "index", "name", "object", "started", "wire")

    def __init__(self, index: int) -> None:
        self.index = index
        self.id: str | None = None
        self.name = ""
        self.arguments: list[str] = []
        self.object: dict[str, Any] | None = None
        self.started = False
        self.wire: dict[str, Any] | None = None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _call_id(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return value
    return str(value) if _int(value) is not None else None


def _part_texts(value: Any) -> list[str]:
    """The texts of a part's nested content: a string, or a list of text parts."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        return []
    out = []
    for item in value:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Mapping) and isinstance(item.get("text"), str):
            out.append(item["text"])
    return out


class Accumulator:
    """The state of one answer while it streams."""

    def __init__(self, route: Route, request: Request, held: HeldText | None) -> None:
        self.route = route
        self.hide_thinking = request.thinking is not None and request.thinking.hide
        self.held = held  # set when text may hold tool calls written as text
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.thinking_field: str | None = None
        self.calls: dict[int, _Call] = {}
        self._moved: dict[int, int] = {}  # the server's index -> where its call now lives
        self.refusal: list[str] = []
        self.finish_reason: str | None = None
        self.usage_raw: Any = None
        self.metadata: dict[str, Any] = {}
        self.malformed_calls: list[str] = []
        self.first: Mapping[str, Any] | None = None

    # -- one chunk -----------------------------------------------------------------------

    def event(self, event: Mapping[str, Any]) -> list[Event]:
        """Read one chunk in full."""
        if self.first is None:
            self.first = event
        if not event.keys() <= KNOWN_FIELDS:
            self.extras(event)
        events: list[Event] = []
        choices = event.get("choices")
        if isinstance(choices, list):
            for choice in choices:
                if not isinstance(choice, Mapping):
                    continue
                if _int(choice.get("index")) not in (None, 0):
                    # n > 1 is refused when the request is built; a server that sends
                    # other choices anyway never gets them mixed into this answer.
                    continue
                delta = choice.get("delta")
                if isinstance(delta, Mapping):
                    events.extend(self.delta(delta))
                reason = choice.get("finish_reason")
                if isinstance(reason, str) and reason:
                    self.finish_reason = reason
        usage = event.get("usage")
        if usage:
            self.usage_raw = usage
        return events

    def extras(self, event: Mapping[str, Any]) -> None:
        """Fields without a neutral home: kept in metadata; an ``error`` ends the call."""
        for key, value in event.items():
            if key in KNOWN_FIELDS:
                continue
            if key == "error" and value:
                self.fail(value)
            if key == "x_groq" and isinstance(value, Mapping):
                # Groq sends the usage of a stream there, on its last chunk.
                groq_usage = value.get("usage")
                if isinstance(groq_usage, Mapping) and self.usage_raw is None:
                    self.usage_raw = groq_usage
            self.metadata[key] = value

    def fail(self, error: Any) -> None:
        """Raise the classified error a server reported inside a 200 stream."""
        wrapped = error if isinstance(error, Mapping) and "error" in error else {"error": error}
        raise http_error(
            status_in(wrapped["error"]),
            {},
            json.dumps(wrapped).encode(),
            self.route,
            partial=self.partial(),
        )

    def delta(self, delta: Mapping[str, Any]) -> list[Event]:
        events: list[Event] = []
        for key in REASONING_FIELDS:
            piece = delta.get(key)
            if isinstance(piece, str) and piece:
                self.think(piece, key, events)
                break
        content = delta.get("content")
        if isinstance(content, str):
            if content:
                self.write(content, events)
        elif isinstance(content, list):
            self.parts(content, events)
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            self.refusal.append(refusal)
        calls = delta.get("tool_calls")
        if calls:
            self.tool_deltas(calls, events)
        return events

    def write(self, text: str, events: list[Event]) -> None:
        self.text.append(text)
        if self.held is None:
            events.append(TextDelta.of(text))
        else:
            visible = self.held.feed(text)
            if visible:
                events.append(TextDelta.of(visible))

    def think(self, text: str, field: str, events: list[Event]) -> None:
        self.thinking_field = self.thinking_field or field
        self.thinking.append(text)
        if not self.hide_thinking:
            events.append(ThinkingDelta(text=text))

    def parts(self, parts: list[Any], events: list[Event]) -> None:
        """``content`` as a list of parts (Mistral's reasoning models), in order."""
        for part in parts:
            if isinstance(part, str):
                if part:
                    self.write(part, events)
            elif isinstance(part, Mapping):
                kind = part.get("type")
                if kind == "text":
                    for text in _part_texts(part.get("text")):
                        if text:
                            self.write(text, events)
                elif kind == THINKING_PART:
                    for text in _part_texts(part.get(THINKING_PART)):
                        if text:
                            self.think(text, THINKING_PART, events)

    # -- tool calls ----------------------------------------------------------------------

    def malformed(self, what: str, item: Any) -> None:
        shown = redact(json.dumps(item, default=repr))[:200]
        self.malformed_calls.append(f"{what}: {shown}")

    def tool_deltas(self, items: Any, events: list[Event]) -> None:
        for item in items if isinstance(items, list) else [items]:
            if not isinstance(item, Mapping):
                self.malformed("a tool-call entry that is not an object", item)
                continue
            function = item.get("function")
            if function is None:
                function = {}
            elif not isinstance(function, Mapping):
                self.malformed("a tool call whose function is not an object", item)
                continue
            name = function.get("name")
            if name is not None and not isinstance(name, str):
                self.malformed("a tool call whose name is not a string", item)
                continue
            self.tool_delta(item, function, name, events)

    def tool_delta(
        self,
        item: Mapping[str, Any],
        function: Mapping[str, Any],
        name: str | None,
        events: list[Event],
    ) -> None:
        numbered = _int(item.get("index"))
        call_id = _call_id(item.get("id"))
        if numbered is not None:
            index = self._moved.get(numbered, numbered)
        else:
            # No index (Ollama, Gemini): order of appearance. A fragment that names a
            # call starts a new one unless it repeats a known id.
            index = self._index_by_appearance(call_id, name)
        call = self.calls.get(index)
        if call is not None and call_id and call.id not in (None, call_id) and call.name:
            # A server that numbers every call 0 but names each with its own id: the
            # new call gets a fresh slot, and later fragments under the server's index
            # (which carry no id) follow it there.
            moved = max(self.calls) + 1
            if numbered is not None:
                self._moved[numbered] = moved
            index = moved
            call = None
        if call is None:
            call = self.calls[index] = _Call(index)
        if call_id and call.id is None:
            call.id = call_id
        if name and name != call.name:
            # Names may stream in pieces; some servers repeat the whole name.
            call.name = name if not call.name or name.startswith(call.name) else call.name + name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            if arguments:
                call.arguments.append(arguments)
        elif isinstance(arguments, Mapping):
            call.object = dict(arguments)
        extra = item.get("extra_content")
        if isinstance(extra, Mapping):
            # Gemini's thought_signature: kept byte for byte to go back with the call.
            call.wire = {**(call.wire or {}), "extra_content": dict(extra)}
        if not call.started and call.name:
            call.started = True
            if call.id is None:
                call.id = new_tool_use_id()
            events.append(ToolCallStart(id=call.id, name=call.name, index=call.index))

    def _index_by_appearance(self, call_id: str | None, name: str | None) -> int:
        if call_id:
            for call in self.calls.values():
                if call.id == call_id:
                    return call.index
        if (call_id or name) or not self.calls:
            return max(self.calls, default=-1) + 1
        return max(self.calls)

    def finish_calls(
        self, cut: bool
    ) -> tuple[list[ToolUseBlock], list[dict[str, Any]], dict[str, list[str]]]:
        """Complete calls, truncated ones (cut at length: never dispatched) and repairs.
        A call that never got a name is no call: it is listed as malformed."""
        blocks: list[ToolUseBlock] = []
        truncated: list[dict[str, Any]] = []
        repairs: dict[str, list[str]] = {}
        for index in sorted(self.calls):
            call = self.calls[index]
            raw = "".join(call.arguments)
            if not call.name:
                self.malformed_calls.append(
                    f"a tool call with no name (arguments {redact(raw)[:200]!r})"
                )
                continue
            call_id = call.id or new_tool_use_id()
            if call.object is not None:
                blocks.append(self._block(call_id, call, call.object))
                continue
            if cut:
                try:
                    value = json.loads(raw) if raw.strip() else {}
                except ValueError:
                    value = None
                if not isinstance(value, dict):
                    truncated.append({"id": call_id, "name": call.name, "arguments": raw})
                    continue
                blocks.append(self._block(call_id, call, value))
                continue
            arguments, applied = parse_arguments(raw)
            if applied:
                repairs[call_id] = applied
            blocks.append(self._block(call_id, call, arguments))
        return blocks, truncated, repairs

    @staticmethod
    def _block(call_id: str, call: _Call, arguments: dict[str, Any] | str) -> ToolUseBlock:
        return ToolUseBlock(id=call_id, name=call.name, input=arguments, wire=call.wire)

    # -- what there is so far ------------------------------------------------------------

    def thinking_block(self) -> ThinkingBlock | None:
        if not self.thinking:
            return None
        thought = "".join(self.thinking)
        return ThinkingBlock(
            text="" if self.hide_thinking else thought,
            wire={self.thinking_field or "reasoning_content": thought},
        )

    def partial(self) -> Response:
        """What arrived before a failure (text, reasoning; calls as far as they got)."""
        content: list[Block] = []
        thinking = self.thinking_block()
        if thinking is not None:
            content.append(thinking)
        text = "".join(self.text)
        if text:
            content.append(TextBlock(text=text))
        got = len(text) + sum(len(t) for t in self.thinking)
        return Response(
            message=Message(role="assistant", content=content, model=self.route.name),
            stop_reason="other",
            usage=estimated_usage(0, got),
            model=self.route.name,
            metadata=dict(self.metadata),
        )
