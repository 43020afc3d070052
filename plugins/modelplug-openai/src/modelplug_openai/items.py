"""Completed output items to neutral blocks, and the stop reason they add up to.

Every item keeps what comes back exactly: a reasoning item is a ThinkingBlock whose
``wire`` is the item as it came (encrypted content included), any item with no
neutral form (a web search call, ...) an OpaqueBlock of kind ``openai.<type>`` with the
item in ``wire``. Text keeps its annotations (``url_citation`` ...) as citations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplug import (
    Block,
    OpaqueBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    new_tool_use_id,
    parse_arguments,
)

from .request import OPAQUE_PREFIX, REASONING

__all__ = ["Converted", "convert_items", "reasoning_text", "stop_reason"]


@dataclass
class Converted:
    """The blocks of a response's output and what the stop reason needs to know."""

    blocks: list[Block] = field(default_factory=list)
    refused: bool = False
    web_searches: int = 0
    truncated_calls: list[dict[str, Any]] = field(default_factory=list)
    repairs: dict[str, list[str]] = field(default_factory=dict)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def reasoning_text(item: Mapping[str, Any]) -> str:
    """A reasoning item's readable part: its summaries, else its reasoning text
    (open-weight models send the reasoning itself)."""
    for key in ("summary", "content"):
        parts = item.get(key)
        if isinstance(parts, list):
            texts = [_text(p.get("text")) for p in parts if isinstance(p, Mapping)]
            joined = "\n\n".join(t for t in texts if t)
            if joined:
                return joined
    return ""


def _message(item: Mapping[str, Any], out: Converted) -> None:
    for part in item.get("content") or []:
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "refusal":
            out.refused = True
            out.blocks.append(TextBlock(text=_text(part.get("refusal"))))
            continue
        text = _text(part.get("text"))
        annotations = part.get("annotations")
        citations = (
            [dict(a) for a in annotations if isinstance(a, Mapping)]
            if isinstance(annotations, list)
            else []
        )
        if text or citations:
            out.blocks.append(TextBlock(text=text, citations=citations or None))


def _function_call(item: Mapping[str, Any], out: Converted, cut: bool) -> None:
    call_id = _text(item.get("call_id")) or _text(item.get("id")) or new_tool_use_id()
    name = _text(item.get("name"))
    raw = _text(item.get("arguments"))
    if cut and item.get("status") == "incomplete":
        # Cut at max_output_tokens inside its arguments: never dispatched.
        out.truncated_calls.append({"id": call_id, "name": name, "arguments": raw})
        return
    arguments, repairs = parse_arguments(raw)
    if repairs:
        out.repairs[call_id] = repairs
    out.blocks.append(ToolUseBlock(id=call_id, name=name, input=arguments))


def _opaque_text(item: Mapping[str, Any]) -> str | None:
    """A readable line for a server-tool item (a web search's query)."""
    action = item.get("action")
    if item.get("type") == "web_search_call" and isinstance(action, Mapping):
        query = action.get("query")
        return f"web search: {query}" if isinstance(query, str) and query else "web search"
    return None


def convert_items(items: list[Any], *, hide_thinking: bool, cut: bool = False) -> Converted:
    """The neutral blocks for ``items`` (a response's ``output``), in order."""
    out = Converted()
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("type"), str):
            continue
        kind = item["type"]
        if kind == REASONING:
            text = "" if hide_thinking else reasoning_text(item)
            out.blocks.append(ThinkingBlock(text=text, wire=dict(item)))
        elif kind == "message":
            _message(item, out)
        elif kind == "function_call":
            _function_call(item, out, cut)
        else:
            if kind == "web_search_call":
                out.web_searches += 1
            out.blocks.append(
                OpaqueBlock(kind=OPAQUE_PREFIX + kind, wire=dict(item), text=_opaque_text(item))
            )
    return out


def stop_reason(status: Any, incomplete_reason: Any, converted: Converted) -> StopReason:
    """completed with calls -> tool_use; incomplete at max_output_tokens -> max_tokens,
    content_filter -> refusal; a refusal alone -> refusal; completed -> end_turn."""
    if status == "incomplete":
        if incomplete_reason == "max_output_tokens":
            return "max_tokens"
        if incomplete_reason == "content_filter":
            return "refusal"
        return "other"
    if any(isinstance(b, ToolUseBlock) for b in converted.blocks):
        return "tool_use"
    if converted.refused:
        return "refusal"
    return "end_turn"
