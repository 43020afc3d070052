"""Stream one Chat Completions call: request, SSE reading, events, the final Response.

The hot path (a plain text delta) costs one JSON parse per event, a few dict lookups
and the TextDelta itself; everything rarer (reasoning, tool calls, finish, usage) goes
through :class:`Accumulator`. Events are split here from decoded chunks at their blank
lines (one step per event, where lines take two), rather than through httpx2's
``aiter_lines`` (three more generator layers per chunk).
"""

from __future__ import annotations

import codecs
import json
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from modelplug.held_text import HeldText
from modelplug.plugin import parse_arguments
from modelplug.redact import redact
from modelplug.types import (
    Block,
    Done,
    Event,
    Message,
    Notice,
    Request,
    Response,
    Route,
    StopReason,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallStart,
    ToolUseBlock,
    Usage,
    new_tool_use_id,
)

from .errors import StreamBrokenError, http_error, stream_broken, unreachable
from .http import request_headers, shared_http
from .request import REASONING_FIELDS, build_body
from .usage import estimate_usage, parse_usage, rate_limit_headers, server_cost

if TYPE_CHECKING:
    from modelplug.client import Client

__all__ = ["Accumulator", "stream_chat"]

STOP_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "eos": "end_turn",
    "end_turn": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "content_filter": "refusal",
    "refusal": "refusal",
}
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
PLAIN_DELTA = frozenset({"role", "content"})


class _Call:
    __slots__ = ("arguments", "id", "index", "name", "object", "started")

    def __init__(self, index: int) -> None:
        self.index = index
        self.id: str | None = None
        self.name = ""
        self.arguments: list[str] = []
        self.object: dict[str, Any] | None = None
        self.started = False


class Accumulator:
    """Everything of one answer except the text: reasoning, tool calls, usage, extras."""

    def __init__(self, route: Route, request: Request) -> None:
        self.route = route
        self.hide_thinking = request.thinking is not None and request.thinking.hide
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.thinking_field: str | None = None
        self.calls: dict[int, _Call] = {}
        self._moved: dict[int, int] = {}  # the server's index -> where its call now lives
        self.refusal: list[str] = []
        self.finish_reason: str | None = None
        self.usage_raw: Any = None
        self.metadata: dict[str, Any] = {}
        self.first: Mapping[str, Any] | None = None
        self.held: HeldText | None = None  # set when text may hold tool calls

    # -- slow paths of one event ---------------------------------------------------------

    def extras(self, event: Mapping[str, Any]) -> None:
        for key, value in event.items():
            if key not in KNOWN_FIELDS:
                if key == "error" and value:
                    raise http_error(
                        _status_of(value),
                        {},
                        json.dumps({"error": value}).encode(),
                        self.route,
                        partial=self.partial(),
                    )
                self.metadata[key] = value

    def event(self, event: dict[str, Any]) -> list[Event]:
        """Read one event in full (everything but the plain text delta's fast path)."""
        if self.first is None:
            self.first = event
        if not event.keys() <= KNOWN_FIELDS:
            self.extras(event)
        events: list[Event] = []
        choices = event.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
            choice = choices[0]
            delta = choice.get("delta")
            if isinstance(delta, Mapping):
                events = self.delta(delta)
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                self.finish_reason = reason
        usage = event.get("usage")
        if usage:
            self.usage_raw = usage
        return events

    def delta(self, delta: Mapping[str, Any]) -> list[Event]:
        events: list[Event] = []
        for key in REASONING_FIELDS:
            piece = delta.get(key)
            if isinstance(piece, str) and piece:
                self.thinking_field = self.thinking_field or key
                self.thinking.append(piece)
                if not self.hide_thinking:
                    events.append(ThinkingDelta(text=piece))
                break
        content = delta.get("content")
        if isinstance(content, str) and content:
            self.text.append(content)
            if self.held is None:
                events.append(TextDelta.of(content))
            else:
                visible = self.held.feed(content)
                if visible:
                    events.append(TextDelta.of(visible))
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            self.refusal.append(refusal)
        calls = delta.get("tool_calls")
        if calls:
            events.extend(self.tool_deltas(calls))
        return events

    def tool_deltas(self, items: Any) -> list[Event]:
        events: list[Event] = []
        for item in items if isinstance(items, list) else [items]:
            if not isinstance(item, Mapping):
                continue
            function = item.get("function") or {}
            given = item.get("index")
            numbered: int | None = (
                given if isinstance(given, int) and not isinstance(given, bool) else None
            )
            index: int
            if numbered is not None:
                index = self._moved.get(numbered, numbered)
            else:
                # No index (Ollama): order of appearance. A fragment that names a call
                # starts a new one unless it repeats a known id.
                index = self._index_by_appearance(item.get("id"), function.get("name"))
            call_id = item.get("id")
            call = self.calls.get(index)
            if call is not None and call_id and call.id not in (None, call_id) and call.name:
                # A server that numbers every call 0 but names each with its own id: the
                # new call gets a fresh slot, and later fragments under the server's
                # index (which carry no id) follow it there.
                moved = max(self.calls) + 1
                if numbered is not None:
                    self._moved[numbered] = moved
                index = moved
                call = None
            if call is None:
                call = self.calls[index] = _Call(index)
            if call_id and call.id is None:
                call.id = str(call_id)
            name = function.get("name")
            if isinstance(name, str) and name and name != call.name:
                # Names may stream in pieces; some servers repeat the whole name.
                call.name = (
                    name if not call.name or name.startswith(call.name) else (call.name + name)
                )
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                if arguments:
                    call.arguments.append(arguments)
            elif isinstance(arguments, Mapping):
                call.object = dict(arguments)
            if not call.started and call.name:
                call.started = True
                if call.id is None:
                    call.id = new_tool_use_id()
                events.append(ToolCallStart(id=call.id, name=call.name, index=call.index))
        return events

    def _index_by_appearance(self, call_id: Any, name: Any) -> int:
        if call_id:
            for call in self.calls.values():
                if call.id == call_id:
                    return call.index
        if (call_id or name) or not self.calls:
            return max(self.calls, default=-1) + 1
        return max(self.calls)

    # -- the end -------------------------------------------------------------------------

    def finish_calls(
        self, cut: bool
    ) -> tuple[list[ToolUseBlock], list[dict[str, Any]], dict[str, list[str]]]:
        """Complete calls, truncated ones (cut at length: never dispatched) and repairs."""
        blocks: list[ToolUseBlock] = []
        truncated: list[dict[str, Any]] = []
        repairs: dict[str, list[str]] = {}
        for index in sorted(self.calls):
            call = self.calls[index]
            call_id = call.id or new_tool_use_id()
            if call.object is not None:
                blocks.append(ToolUseBlock(id=call_id, name=call.name, input=call.object))
                continue
            raw = "".join(call.arguments)
            if cut:
                try:
                    value = json.loads(raw) if raw.strip() else {}
                except ValueError:
                    value = None
                if not isinstance(value, dict):
                    truncated.append({"id": call_id, "name": call.name, "arguments": raw})
                    continue
                blocks.append(ToolUseBlock(id=call_id, name=call.name, input=value))
                continue
            arguments, applied = parse_arguments(raw)
            if applied:
                repairs[call_id] = applied
            blocks.append(ToolUseBlock(id=call_id, name=call.name, input=arguments))
        return blocks, truncated, repairs

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
            usage=Usage(output=-(-got // 4), reported=False),
            model=self.route.name,
            metadata=dict(self.metadata),
        )


def _status_of(error: Any) -> int | None:
    if isinstance(error, Mapping):
        for key in ("status", "code", "status_code"):
            value = error.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
                return value
    return None


async def stream_chat(
    route: Route, request: Request, client: Client, key: str | None
) -> AsyncIterator[Event]:
    """The events of one call, ending with exactly one Done."""
    import httpx2

    http, options = shared_http(client)
    body = build_body(request, route)
    payload = json.dumps(body, ensure_ascii=False).encode()
    url = f"{route.endpoint.base_url}/chat/completions"
    try:
        response = await http.send(
            http.build_request("POST", url, content=payload, headers=request_headers(route, key)),
            stream=True,
        )
    except httpx2.ConnectError:
        raise unreachable(route) from None
    except httpx2.TimeoutException as exc:
        raise stream_broken(
            route,
            f"{route.provider} at {route.endpoint.base_url} did not answer in time "
            f"({type(exc).__name__})",
            reason="timed out",
        ) from None
    except httpx2.TransportError as exc:
        raise stream_broken(
            route,
            f"the request to {route.provider} failed: {type(exc).__name__}",
            reason="connection lost",
        ) from None
    try:
        if response.status_code >= 300:
            try:
                error_body = await response.aread()
            except httpx2.HTTPError:
                error_body = b""
            raise http_error(response.status_code, response.headers, error_body, route)
        # The reading loop is inline, not a nested generator: every generator layer
        # costs a hop per event.
        sent = len(payload)
        acc = Accumulator(route, request)
        text = acc.text
        tools = request.tools
        mode = route.info.text_tool_calls or "whole"
        held: HeldText | None = client.held_text(tools, mode) if tools and mode != "off" else None
        acc.held = held
        loads = json.loads
        # One scanner per stream (its memo is not shared); typeshed does not declare it.
        scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
        plain_delta = PLAIN_DELTA
        known_fields = KNOWN_FIELDS
        decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        rest = ""  # the start of an event whose blank line has not arrived yet
        fast = False  # the fast path opens after the first event (read in full)
        finished = False
        try:
            if response.headers.get("content-type", "").startswith("application/json"):
                # A server that ignored stream=true: its whole completion is the one event
                # it would have streamed, and the end.
                for event in acc.event(_as_event(await response.aread(), route, acc)):
                    yield event
                finished = True
            else:
                async for chunk in response.aiter_bytes():
                    piece = rest + decode(chunk) if rest else decode(chunk)
                    if "\r" in piece:
                        piece = piece.replace("\r\n", "\n")
                    if "\n\n" not in piece:
                        rest = piece
                        continue
                    # Split into events (not lines): one step per event, not two.
                    events = piece.split("\n\n")
                    rest = events.pop()
                    for raw in events:
                        if "\n" not in raw and raw.startswith("data:"):
                            start = 6 if raw.startswith(" ", 5) else 5  # no copy of the JSON
                        else:
                            # Comments (": OPENROUTER PROCESSING"), event:/id: fields, data
                            # over several lines: the slow way.
                            data = _data_of(raw)
                            if data is None:
                                continue
                            raw, start = data, 0
                        # One JSON parse per event, through json's C scanner directly:
                        # json.loads adds two regex matches and two Python frames.
                        try:
                            obj, end = scan(raw, start)
                            if end != len(raw):
                                raise ValueError("trailing data")
                        except (StopIteration, ValueError):
                            # "[DONE]", whitespace around the JSON, or a broken event.
                            raw = raw[start:]
                            try:
                                obj = loads(raw)
                            except ValueError:
                                if raw.strip() == "[DONE]":
                                    finished = True
                                    continue
                                if not raw.strip():
                                    continue  # an empty data line: a keep-alive
                                raise _malformed(route, raw, acc) from None
                        if fast:
                            # The hot path: a plain text delta. Anything else (reasoning,
                            # calls, finish, usage, no choices) falls through to the
                            # Accumulator.
                            try:
                                if not obj.keys() <= known_fields:
                                    acc.extras(obj)  # unknown fields are kept, on any event
                                choices = obj.get("choices")
                                if choices:
                                    choice = choices[0]
                                    delta = choice.get("delta")
                                    if delta and choice.get("finish_reason") is None:
                                        content = delta.get("content")
                                        if (
                                            type(content) is str
                                            and content
                                            and (len(delta) == 1 or delta.keys() <= plain_delta)
                                        ):
                                            text.append(content)
                                            yield TextDelta.of(content)
                                            continue
                            except AttributeError:
                                raise _malformed(route, raw, acc) from None
                        if type(obj) is not dict:
                            raise _malformed(route, raw, acc)
                        for event in acc.event(obj):
                            yield event
                        fast = held is None
                tail = (rest + decode(b"", final=True)).strip()
                if tail:
                    # A last event without its blank line.
                    data = _data_of(tail)
                    if data is not None and data.strip() == "[DONE]":
                        finished = True
                    elif data is not None:
                        try:
                            obj = loads(data)
                        except ValueError:
                            raise _malformed(route, data, acc) from None
                        if type(obj) is not dict:
                            raise _malformed(route, data, acc)
                        for event in acc.event(obj):
                            yield event
        except httpx2.ReadTimeout:
            raise stream_broken(
                route,
                f"{route.provider} sent nothing for {options.read_timeout:g} s (read_timeout in "
                "[openai-compat]); the server stalled",
                reason="the stream stalled",
                partial=acc.partial(),
            ) from None
        except (httpx2.TransportError, httpx2.DecodingError) as exc:
            raise stream_broken(
                route,
                f"the connection to {route.provider} dropped mid-stream ({type(exc).__name__})",
                reason="connection lost",
                partial=acc.partial(),
            ) from None
        if not finished and acc.finish_reason is None:
            raise stream_broken(
                route,
                f"the stream from {route.provider} ended before the server said it was done "
                "(no finish_reason and no [DONE])",
                reason="the stream ended early",
                partial=acc.partial(),
            )
        for event in _finish(route, request, acc, held, sent, response.headers):
            yield event
    finally:
        await response.aclose()


def _as_event(body: bytes, route: Route, acc: Accumulator) -> dict[str, Any]:
    """A whole (non-streamed) completion as the one event it would have streamed."""
    try:
        whole = json.loads(body)
    except ValueError:
        raise _malformed(route, body.decode("utf-8", "replace"), acc) from None
    if not isinstance(whole, dict):
        raise _malformed(route, body.decode("utf-8", "replace"), acc)
    choices = whole.get("choices") or []
    event = dict(whole)
    event["choices"] = [
        {"delta": c.get("message") or {}, "finish_reason": c.get("finish_reason")}
        for c in choices[:1]
        if isinstance(c, dict)
    ]
    return event


def _data_of(event: str) -> str | None:
    """The data of an SSE event in its general form (None: no data lines)."""
    data = [line[5:] for line in event.split("\n") if line.startswith("data:")]
    return "\n".join(data) if data else None


def _malformed(route: Route, raw: str, acc: Accumulator) -> StreamBrokenError:
    return stream_broken(
        route,
        f"{route.provider} sent an event that is not a JSON object: {redact(raw.strip())[:200]!r}",
        reason="malformed stream event",
        partial=acc.partial(),
    )


def _finish(
    route: Route,
    request: Request,
    acc: Accumulator,
    held: HeldText | None,
    sent: int,
    headers: Mapping[str, str],
) -> list[Event]:
    events: list[Event] = []
    reason = acc.finish_reason
    cut = reason == "length"
    calls, truncated, repairs = acc.finish_calls(cut)
    text = "".join(acc.text)
    read_from_text = False
    if held is not None:
        if not calls and not truncated and not cut:
            rest, text, calls = held.finish()
            read_from_text = bool(calls)
        else:
            rest = held.release()
        if rest:
            events.append(TextDelta(text=rest))
    stop: StopReason = STOP_REASONS.get(reason or "stop", "other")
    if calls and stop in ("end_turn", "other"):
        stop = "tool_use"  # Ollama says "stop" after a call; calls read from text too
    if acc.refusal and not text:
        text = "".join(acc.refusal)
        stop = "refusal"
    content: list[Block] = []
    thinking = acc.thinking_block()
    if thinking is not None:
        content.append(thinking)
    if text:
        content.append(TextBlock(text=text))
    content.extend(calls)
    metadata = acc.metadata
    served = acc.first.get("model") if acc.first is not None else None
    if isinstance(served, str) and served and served != route.model:
        metadata["served_model"] = served
    limits = rate_limit_headers(headers)
    if limits:
        metadata["rate_limits"] = limits
    if truncated:
        metadata["truncated_tool_calls"] = truncated
        names = ", ".join(t["name"] or "?" for t in truncated)
        events.append(
            Notice(
                kind="truncated_tool_call",
                message=f"the output hit max_tokens inside the arguments of {names}; the call was "
                "not complete and is not returned as a tool call. Raise max_tokens.",
            )
        )
    if repairs:
        metadata["tool_call_repairs"] = repairs
    if read_from_text:
        metadata["tool_calls_from_text"] = True
    usage = parse_usage(acc.usage_raw)
    if usage is None:
        got = (
            len(text)
            + sum(len(t) for t in acc.thinking)
            + sum(
                len(json.dumps(c.input)) if not isinstance(c.input, str) else len(c.input)
                for c in calls
            )
        )
        usage = estimate_usage(sent, got)
    response = Response(
        message=Message(role="assistant", content=content, model=route.name),
        stop_reason=stop,
        usage=usage,
        model=route.name,
        server_cost=server_cost(acc.usage_raw, headers),
        metadata=metadata,
    )
    events.append(Done(response=response))
    return events
