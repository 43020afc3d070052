"""The end of a call: the last deltas, the notices and the one Done with the Response."""

from __future__ import annotations

import json
from collections.abc import Mapping

from modelplug import (
    Block,
    Done,
    Event,
    Message,
    Notice,
    Response,
    Route,
    StopReason,
    TextBlock,
    TextDelta,
    ToolUseBlock,
    Usage,
    estimated_usage,
)
from modelplug_kit import read_timings

from .accumulator import Accumulator
from .budget import budget_from_headers
from .citations import citations_of
from .usage import rate_limit_headers, read_usage, server_cost, usage_note

__all__ = ["STOP_REASONS", "finish"]

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


def finish(
    route: Route,
    acc: Accumulator,
    sent: int,
    headers: Mapping[str, str],
) -> list[Event]:
    """What the end of a stream shows: held-back text, notices, and the Done."""
    events: list[Event] = []
    cut = acc.finish_reason == "length"
    calls, truncated, repairs = acc.finish_calls(cut)
    text = "".join(acc.text)
    read_from_text = False
    if acc.held is not None:
        if not calls and not truncated and not cut:
            # No real calls: the text may hold calls written as text.
            rest, text, calls = acc.held.finish()
            read_from_text = bool(calls)
        else:
            rest = acc.held.release()
        if rest:
            events.append(TextDelta(text=rest))
    stop = _stop_reason(acc, calls)
    if acc.refusal and not text:
        # The refusal is the answer: shown like text, so the screen matches the truth.
        text = "".join(acc.refusal)
        stop = "refusal"
        events.append(TextDelta(text=text))
    content: list[Block] = []
    thinking = acc.thinking_block()
    if thinking is not None:
        content.append(thinking)
    metadata = _metadata(route, acc, headers)
    if text:
        content.append(TextBlock(text=text, citations=citations_of(metadata)))
    content.extend(calls)
    if truncated:
        metadata["truncated_tool_calls"] = truncated
        events.append(_truncated_notice(truncated))
    if acc.malformed_calls:
        metadata["malformed_tool_calls"] = list(acc.malformed_calls)
        events.append(
            Notice(
                kind="malformed_tool_call",
                message=f"{route.provider} sent {len(acc.malformed_calls)} tool-call "
                "fragment(s) that are not a valid call; they are not returned as tool "
                "calls (see metadata['malformed_tool_calls'])",
            )
        )
    if repairs:
        metadata["tool_call_repairs"] = repairs
    if read_from_text:
        metadata["tool_calls_from_text"] = True
    usage = _usage(acc, metadata, sent, text, calls)
    budget = budget_from_headers(headers)
    if budget is not None:
        usage = usage.model_copy(update={"key_budget": budget})
    response = Response(
        message=Message(role="assistant", content=content, model=route.name),
        stop_reason=stop,
        usage=usage,
        model=route.name,
        server_cost=server_cost(acc.usage_raw, headers),
        metadata=metadata,
        timings=read_timings(metadata.get("timings"), headers),
    )
    events.append(Done(response=response))
    return events


def _stop_reason(acc: Accumulator, calls: list[ToolUseBlock]) -> StopReason:
    stop: StopReason = STOP_REASONS.get(acc.finish_reason or "stop", "other")
    if calls and stop in ("end_turn", "other"):
        return "tool_use"  # Ollama says "stop" after a call; calls read from text too
    if stop == "tool_use" and not calls:
        return "other"  # the only calls were malformed
    return stop


def _metadata(route: Route, acc: Accumulator, headers: Mapping[str, str]) -> dict[str, object]:
    metadata = acc.metadata
    served = acc.first.get("model") if acc.first is not None else None
    if isinstance(served, str) and served and served != route.model:
        metadata["served_model"] = served
    limits = rate_limit_headers(headers)
    if limits:
        metadata["rate_limits"] = limits
    return metadata


def _truncated_notice(truncated: list[dict[str, object]]) -> Notice:
    names = ", ".join(str(t["name"] or "?") for t in truncated)
    return Notice(
        kind="truncated_tool_call",
        message=f"the output hit max_tokens inside the arguments of {names}; the call was "
        "not complete and is not returned as a tool call. Raise max_tokens.",
    )


def _usage(
    acc: Accumulator,
    metadata: dict[str, object],
    sent: int,
    text: str,
    calls: list[ToolUseBlock],
) -> Usage:
    """The server's usage (with a note when a stated rule read it), else the estimate."""
    usage = read_usage(acc.usage_raw)
    if usage is not None:
        note = usage_note(acc.usage_raw, usage)
        if note:
            metadata["usage_note"] = note
        return usage
    got = (
        len(text)
        + sum(len(t) for t in acc.thinking)
        + sum(len(c.input) if isinstance(c.input, str) else len(json.dumps(c.input)) for c in calls)
    )
    return estimated_usage(sent, got)
