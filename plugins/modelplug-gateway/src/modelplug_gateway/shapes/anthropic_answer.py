"""A modelplug Response written as a Messages API message, and errors in its shape.

Blocks an Anthropic model made go back exactly as it sent them (its ``wire``: the
thinking with its signature, redacted thinking, server-tool blocks); blocks another
provider made are written in the Messages shape from their neutral fields.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

from modelplug import Block, OpaqueBlock, Response, TextBlock, ThinkingBlock, ToolUseBlock, Usage

from ..call_timings import timings_field
from ..errors import ANTHROPIC_TYPES

__all__ = [
    "ERROR_TYPES",
    "block_json",
    "error_body",
    "error_type",
    "message_id",
    "message_json",
    "stop_reason",
    "usage_json",
]

# What the API answers for each status (the SDK picks its exception class by status):
# the one table, in modelplug_gateway.errors.
ERROR_TYPES = ANTHROPIC_TYPES
_KNOWN = frozenset(ERROR_TYPES.values())
# Wire types an Anthropic model's own blocks carry, sent back as they came.
_ANTHROPIC_KINDS = frozenset(
    {"thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result"}
)


def error_type(status: int, kind: str = "") -> str:
    """The Messages error ``type`` for ``status`` (``kind`` wins when it is one)."""
    if kind in _KNOWN:
        return kind
    if status in ERROR_TYPES:
        return ERROR_TYPES[status]
    return "invalid_request_error" if 400 <= status < 500 else "api_error"


def error_body(status: int, kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type(status, kind), "message": message}}


def message_id(response: Response) -> str:
    given = response.metadata.get("id")
    if isinstance(given, str) and given.startswith("msg_"):
        return given
    return "msg_" + uuid.uuid4().hex[:24]


def stop_reason(response: Response) -> str:
    reason = response.stop_reason
    if reason == "end_turn":
        return "stop_sequence" if stop_sequence(response) is not None else "end_turn"
    if reason == "repetition":
        # Core's repetition guard cut a loop: the server stopped the answer, as the
        # Chat Completions shape's content_filter says; Anthropic's name for that.
        return "refusal"
    if reason == "other":
        # The neutral model had no name for it; end_turn is the reading a client
        # handles without surprise.
        return "end_turn"
    return reason


def stop_sequence(response: Response) -> str | None:
    value = response.metadata.get("stop_sequence")
    return value if isinstance(value, str) else None


def usage_json(usage: Usage) -> dict[str, int]:
    # modelplug's input excludes the cache, as Anthropic's input_tokens does.
    return {
        "input_tokens": usage.input,
        "output_tokens": usage.output,
        "cache_read_input_tokens": usage.cache_read,
        "cache_creation_input_tokens": usage.cache_write,
    }


def block_json(block: Block) -> dict[str, Any] | None:
    """One block as a Messages content block; None for what the shape cannot carry."""
    if isinstance(block, TextBlock):
        out: dict[str, Any] = {"type": "text", "text": block.text}
        if block.citations:
            out["citations"] = copy.deepcopy(block.citations)
        return out
    if isinstance(block, ToolUseBlock):
        value = block.input
        # Broken JSON a model wrote stays readable to the caller, inside an object.
        arguments = value if isinstance(value, dict) else {"_raw_arguments": value}
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": arguments}
    if isinstance(block, ThinkingBlock):
        wire = block.wire
        if wire is not None and wire.get("type") in ("thinking", "redacted_thinking"):
            return copy.deepcopy(wire)
        if block.redacted:
            return None
        return {"type": "thinking", "thinking": block.text, "signature": block.signature or ""}
    if isinstance(block, OpaqueBlock) and block.wire.get("type") in _ANTHROPIC_KINDS:
        return copy.deepcopy(block.wire)
    return None


def message_json(response: Response, model: str) -> dict[str, Any]:
    """The whole non-streamed answer."""
    content = [b for b in map(block_json, response.message.content) if b is not None]
    return {
        "id": message_id(response),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason(response),
        "stop_sequence": stop_sequence(response),
        "usage": usage_json(response.usage),
        **timings_field(response),  # beside usage, as the chat shape puts it
    }
