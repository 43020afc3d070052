"""Stream one ``/api/chat`` call: the request, the NDJSON lines, events, the Response.

Sending, statuses, a web page where the stream should be, a cut or a stall mid-stream,
closing early and keeping the connection are the kit's HTTP path
(:data:`modelplug_ollama.http.HTTP`); what is here is Ollama's wire.

The hot path (a line that only carries text) costs one JSON parse, a few dict lookups
and the TextDelta itself; every other line (thinking, tool calls, the final line, an
error) goes through :class:`Accumulator`. Lines are read inline, with no generator
layer per line.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from modelplug import (
    Block,
    Done,
    Event,
    HeldText,
    Message,
    ModelError,
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
    estimated_usage,
    new_tool_use_id,
    parse_arguments,
    redact,
)
from modelplug_kit import NDJSONFramer, usage_from_ollama

from .errors import ERRORS, error_line, not_done
from .http import HTTP, request_headers
from .probe import Known, known_for, learn, num_ctx_for
from .request import build_body

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["Accumulator", "stream_chat"]

STOP_REASONS: dict[str, StopReason] = {"stop": "end_turn", "length": "max_tokens"}
DURATIONS = ("total_duration", "load_duration", "prompt_eval_duration", "eval_duration")
# Fields of the final line kept in metadata as the server sent them (Ollama's cloud
# models say which upstream answered).
PASSED_ON = ("remote_model", "remote_host")


class Accumulator:
    """Everything of one answer: text, thinking, tool calls, the final line."""

    def __init__(self, route: Route, request: Request, num_ctx: int | None) -> None:
        self.route = route
        self.num_ctx = num_ctx
        self.hide_thinking = request.thinking is not None and request.thinking.hide
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.calls: list[ToolUseBlock] = []
        self.repairs: dict[str, list[str]] = {}
        self.served: str | None = None
        self.final: dict[str, Any] | None = None  # the line with done: true
        self.held: HeldText | None = None  # set when text may hold tool calls

    def loads(self, line: str) -> Any:
        """A line the fast scanner refused (whitespace around it, or broken): parsed
        the slow way; None for a blank line."""
        if not line.strip():
            return None
        try:
            return json.loads(line)
        except ValueError:
            raise self.malformed(line) from None

    def malformed(self, line: str) -> ModelError:
        return ERRORS.transient(
            self.route,
            f"Ollama sent a line that is not a JSON object: {redact(line.strip())[:200]!r}",
            reason="malformed stream line",
            partial=self.partial(),
        )

    def line(self, obj: Any, raw: str) -> list[Event]:
        """Read one line in full (everything but the plain text line's fast path)."""
        if type(obj) is not dict:
            raise self.malformed(raw)
        if self.served is None and isinstance(obj.get("model"), str):
            self.served = obj["model"]
        error = obj.get("error")
        if error:
            raise error_line(error, self.route, self.partial(), self.num_ctx)
        events: list[Event] = []
        message = obj.get("message")
        if isinstance(message, dict):
            thought = message.get("thinking")
            if type(thought) is str and thought:
                self.thinking.append(thought)
                if not self.hide_thinking:
                    events.append(ThinkingDelta(text=thought))
            content = message.get("content")
            if type(content) is str and content:
                self.text.append(content)
                if self.held is None:
                    events.append(TextDelta.of(content))
                else:
                    visible = self.held.feed(content)
                    if visible:
                        events.append(TextDelta.of(visible))
            calls = message.get("tool_calls")
            if calls:
                events.extend(self.tool_calls(calls))
        elif message is not None:
            raise self.malformed(raw)
        if obj.get("done") is True:
            self.final = obj
        return events

    def tool_calls(self, items: Any) -> list[Event]:
        """Ollama sends each call whole, its arguments an object, in one line."""
        events: list[Event] = []
        for item in items if isinstance(items, list) else [items]:
            function = item.get("function") if isinstance(item, dict) else None
            if not isinstance(function, dict):
                continue
            name = function.get("name")
            if not isinstance(name, str) or not name:
                continue
            given = item.get("id")
            call_id = given if isinstance(given, str) and given else new_tool_use_id()
            arguments = function.get("arguments")
            value: dict[str, Any] | str
            if isinstance(arguments, dict):
                value = arguments
            elif isinstance(arguments, str):
                value, applied = parse_arguments(arguments)
                if applied:
                    self.repairs[call_id] = applied
            elif arguments is None:
                value = {}
            else:
                # Not an object: kept as text, so the tool's input check refuses it
                # and the model can try again.
                value = json.dumps(arguments)
            events.append(ToolCallStart(id=call_id, name=name, index=len(self.calls)))
            self.calls.append(ToolUseBlock(id=call_id, name=name, input=value))
        return events

    def thinking_block(self) -> ThinkingBlock | None:
        if not self.thinking:
            return None
        thought = "".join(self.thinking)
        return ThinkingBlock(text="" if self.hide_thinking else thought, wire={"thinking": thought})

    def partial(self) -> Response | None:
        """What arrived before a failure: thinking, text and the calls complete so far
        (None: nothing did)."""
        if not self.text and not self.thinking and not self.calls:
            return None
        content: list[Block] = []
        thinking = self.thinking_block()
        if thinking is not None:
            content.append(thinking)
        text = "".join(self.text)
        if text:
            content.append(TextBlock(text=text))
        content.extend(self.calls)
        got = len(text) + sum(len(t) for t in self.thinking)
        return Response(
            message=Message(role="assistant", content=content, model=self.route.name),
            stop_reason="other",
            usage=estimated_usage(0, got),
            model=self.route.name,
        )

    def finish(self, sent: int) -> list[Event]:
        """The events after the final line: held text, then Done."""
        final = self.final or {}
        reason = final.get("done_reason")
        if reason in ("load", "unload"):
            raise not_done(self.route, reason, self.partial())
        events: list[Event] = []
        cut = reason == "length"
        calls = list(self.calls)
        text = "".join(self.text)
        from_text = False
        if self.held is not None:
            if not calls and not cut:
                rest, text, calls = self.held.finish()
                from_text = bool(calls)
            else:
                rest = self.held.release()
            if rest:
                events.append(TextDelta(text=rest))
        # An Ollama before done_reason existed said nothing: that was a stop.
        stop: StopReason = STOP_REASONS.get(reason, "other") if reason else "end_turn"
        if calls and stop in ("end_turn", "other"):
            stop = "tool_use"  # Ollama says "stop" after a call
        content: list[Block] = []
        thinking = self.thinking_block()
        if thinking is not None:
            content.append(thinking)
        if text:
            content.append(TextBlock(text=text))
        content.extend(calls)
        metadata = self.metadata(final, reason)
        if from_text:
            metadata["tool_calls_from_text"] = True
        usage = usage_from_ollama(final)
        if usage is None:
            got = len(text) + sum(len(t) for t in self.thinking)
            got += sum(len(json.dumps(c.input)) for c in calls)
            usage = estimated_usage(sent, got)
        response = Response(
            message=Message(role="assistant", content=content, model=self.route.name),
            stop_reason=stop,
            usage=usage,
            model=self.route.name,
            metadata=metadata,
        )
        events.append(Done(response=response))
        return events

    def metadata(self, final: dict[str, Any], reason: Any) -> dict[str, Any]:
        metadata: dict[str, Any] = {}
        durations = {
            name.removesuffix("_duration"): final[name]
            for name in DURATIONS
            if type(final.get(name)) is int
        }
        if durations:
            metadata["durations_ns"] = durations
        if self.num_ctx is not None:
            metadata["num_ctx"] = self.num_ctx
        if self.served and self.served != self.route.model:
            metadata["served_model"] = self.served
        for name in PASSED_ON:
            if isinstance(final.get(name), str) and final[name]:
                metadata[name] = final[name]
        if reason and reason not in STOP_REASONS:
            metadata["done_reason"] = reason
        if self.repairs:
            metadata["tool_call_repairs"] = self.repairs
        return metadata


def _no_tools(route: Route, known: Known | None) -> str | None:
    """What /api/show said when the model cannot call tools, unless the route's info
    already says so (core then gave the caller the same notice before the call)."""
    if known is None or known.can("tools") is not False or route.info.supports_tools is False:
        return None
    caps = ", ".join(known.capabilities or ()) or "none"
    return (
        f"Ollama lists its capabilities as {caps} (from /api/show); the tools are left "
        "out of the request, which Ollama would refuse"
    )


def _can_call_tools(route: Route, known: Known | None) -> bool:
    """False when /api/show or the route (the user's settings, a probe) says the model
    cannot call tools: Ollama answers 400 to a request that sends it any."""
    if route.info.supports_tools is False:
        return False
    return known is None or known.can("tools") is not False


async def stream_chat(
    route: Route, request: Request, client: CallContext, key: str | None
) -> AsyncIterator[Event]:
    """The events of one call, ending with exactly one Done."""
    options = HTTP.options(client)
    known = known_for(client, route)
    if known is None and options.probe:
        known = await learn(client, route)
    tools = request.tools if request.tool_choice != "none" else []
    said = _no_tools(route, known) if tools else None
    if said is not None:
        # The same notice as core's; it says the tools will not be called, so they are
        # not sent (Ollama would answer 400) and no call is read from the text either.
        unsupported = client.tools_unsupported(route, request, said=said)
        if unsupported is not None:
            yield unsupported
    can_call = _can_call_tools(route, known)
    num_ctx = num_ctx_for(client, route, known)
    body = build_body(
        request,
        route,
        num_ctx=num_ctx,
        keep_alive=options.keep_alive,
        can_think=known.can("thinking") if known is not None else None,
        send_tools=can_call,
    )
    payload = json.dumps(body, ensure_ascii=False).encode()
    headers = request_headers(route, key, client.settings)
    acc = Accumulator(route, request, num_ctx)
    mode = route.info.text_tool_calls or "whole"
    # Calls written as text are read by default, and always when the user's settings
    # name a mode; for a model that cannot call tools only then (the notice said so).
    reads_text = mode != "off" and (can_call or route.info.text_tool_calls is not None)
    held = client.held_text(tools, mode) if tools and reads_text else None
    acc.held = held
    append = acc.text.append
    framer = NDJSONFramer()
    feed = framer.feed
    # One scanner per stream (its memo is not shared); typeshed does not declare it.
    # json.loads would add two regex matches and two Python frames per line.
    scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
    text_delta = TextDelta.of  # bound once: a classmethod binds on every call
    fast = False  # opens after the first line (read in full: it names the model)
    cut_line = False
    url = f"{route.endpoint.base_url}/api/chat"
    errors = ERRORS.for_call(num_ctx)  # a context overflow's hint names the num_ctx sent
    async with HTTP.stream(
        client, route, url, body=payload, headers=headers, errors=errors
    ) as answer:
        answer.partial = acc.partial
        if answer.whole is not None:
            # One JSON document (a proxy that ignored stream: true): the final line alone.
            text = answer.whole.decode("utf-8", "replace")
            whole = acc.loads(text)
            if whole is not None:
                for event in acc.line(whole, text):
                    yield event
        else:
            async for chunk in answer:
                for line in feed(chunk):
                    try:
                        obj, end = scan(line, 0)
                        if end != len(line):
                            raise ValueError("trailing data")
                    except (StopIteration, ValueError):
                        obj = acc.loads(line)
                        if obj is None:
                            continue
                    if fast:
                        # The hot path: {"model", "created_at", "message": {"role",
                        # "content"}, "done": false}. Anything else falls through.
                        try:
                            message = obj["message"]
                            if obj["done"] is False and len(message) == 2 and "role" in message:
                                content = message["content"]
                                if type(content) is str and content:
                                    append(content)
                                    yield text_delta(content)
                                    continue
                        except (KeyError, TypeError):
                            pass
                    for event in acc.line(obj, line):
                        yield event
                    if acc.final is not None:
                        break
                    fast = held is None
                if acc.final is not None:
                    # Leaving the block now reads the chunked end: the connection is
                    # kept for the next call.
                    break
            if acc.final is None:
                for line in framer.close():
                    # A last line without its newline: whole (a server that ends on no
                    # newline), or what a cut connection left of it.
                    try:
                        obj = json.loads(line)
                    except ValueError:
                        cut_line = True
                        continue
                    for event in acc.line(obj, line):
                        yield event
    if acc.final is None:
        raise ERRORS.transient(
            route,
            "the stream from Ollama ended before its final line (done: true)"
            + ("; its last line was cut off" if cut_line else ""),
            reason="the stream ended early",
            partial=acc.partial(),
        )
    # After the block: the connection is back in the pool before Done reaches a caller
    # that stops there.
    for event in acc.finish(len(payload)):
        yield event
