"""A modelplug Response as the Responses API's response object.

The output items follow the answer's blocks in order: a ``message`` item for each run
of text, a ``function_call`` item for each call, a ``reasoning`` item for each piece of
reasoning (:mod:`.reasoning_items`), and an OpenAI upstream's other items (a web search
call) as they came. The object restates the request's options as OpenAI's does
(``Parsed.echo``); its ``id`` names nothing kept: the gateway stores no response.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

# At the top, not in the functions: they run on every call (modelplug is loaded anyway).
from modelplug import OpaqueBlock, TextBlock, ThinkingBlock, ToolUseBlock

from ..call_timings import timings_field
from ..errors import openai_code
from .reasoning_items import is_reasoning, reasoning_item
from .responses_request import arguments_json

if TYPE_CHECKING:
    from modelplug import Response, Usage

    from .base import Parsed

__all__ = [
    "error_body",
    "function_call_item",
    "message_item",
    "new_id",
    "output_items",
    "response_json",
    "usage_json",
]

# OpenAI's own annotation types: another provider's citations have other shapes.
_ANNOTATIONS = frozenset({"url_citation", "file_citation", "container_file_citation", "file_path"})


def new_id(prefix: str) -> str:
    return prefix + os.urandom(12).hex()


def usage_json(usage: Usage) -> dict[str, Any]:
    prompt = usage.total_input
    return {
        "input_tokens": prompt,
        "input_tokens_details": {
            "cached_tokens": usage.cache_read,
            "cache_write_tokens": usage.cache_write,
        },
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning},
        "total_tokens": prompt + usage.output,
    }


def text_part(text: str, annotations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": annotations or [], "logprobs": []}


def message_item(item_id: str, parts: list[dict[str, Any]], status: str) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": status,
        "content": parts,
    }


def function_call_item(
    item_id: str, call_id: str, name: str, arguments: str, status: str
) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }


def own_annotations(citations: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    return [c for c in citations or () if c.get("type") in _ANNOTATIONS]


def output_items(response: Response, encrypted: bool) -> list[dict[str, Any]]:
    """The response's blocks as output items, in order."""
    route = response.model or response.message.model
    items: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []

    def flush() -> None:
        if parts:
            items.append(message_item(new_id("msg_"), parts.copy(), "completed"))
            parts.clear()

    for block in response.message.content:
        if isinstance(block, TextBlock):
            if block.text or block.citations:
                parts.append(text_part(block.text, own_annotations(block.citations)))
        elif isinstance(block, ToolUseBlock):
            flush()
            arguments = arguments_json(block.input)
            items.append(
                function_call_item(new_id("fc_"), block.id, block.name, arguments, "completed")
            )
        elif isinstance(block, ThinkingBlock | OpaqueBlock):
            flush()
            if is_reasoning(block):
                items.append(reasoning_item(block, route, encrypted))
            else:
                items.append(dict(block.wire or {}))  # an OpenAI item: as it came
    flush()
    return items


def status_of(response: Response) -> tuple[str, dict[str, Any] | None]:
    """The response's ``status`` and ``incomplete_details``."""
    if response.stop_reason == "max_tokens":
        return "incomplete", {"reason": "max_output_tokens"}
    if response.stop_reason == "refusal" and response.parsed is None and not response.text:
        return "incomplete", {"reason": "content_filter"}
    return "completed", None


def request_fields(model: str, echo: dict[str, Any]) -> dict[str, Any]:
    """What a response object restates of its request (the same from its first event to
    its last: a stream encodes it once)."""
    return {
        "model": model,
        "background": False,
        "instructions": echo.get("instructions"),
        "max_output_tokens": echo.get("max_output_tokens"),
        "parallel_tool_calls": echo.get("parallel_tool_calls", True),
        "previous_response_id": None,
        "reasoning": echo.get("reasoning"),
        "store": echo.get("store", False),
        "temperature": echo.get("temperature"),
        "text": echo.get("text") or {"format": {"type": "text"}},
        "tool_choice": echo.get("tool_choice", "auto"),
        "tools": echo.get("tools", []),
        "top_p": echo.get("top_p"),
        "truncation": "disabled",
        "metadata": echo.get("metadata") or {},
    }


def response_json(
    response_id: str,
    model: str,
    echo: dict[str, Any],
    *,
    status: str,
    output: list[dict[str, Any]],
    usage: dict[str, Any] | None = None,
    incomplete: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The response object, as OpenAI's restates a request."""
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": incomplete,
        "output": output,
        "usage": usage,
        **request_fields(model, echo),
    }


def answer_json(response: Response, model: str, parsed: Parsed | None) -> dict[str, Any]:
    """The non-streamed answer."""
    echo = parsed.echo if parsed is not None else {}
    status, incomplete = status_of(response)
    answer = response_json(
        new_id("resp_"),
        model,
        echo,
        status=status,
        output=output_items(response, bool(echo.get("encrypted"))),
        usage=usage_json(response.usage),
        incomplete=incomplete,
    )
    return {**answer, **timings_field(response)}  # where the time went, as the chat shape's


def error_body(status: int, kind: str, message: str, code: str | None = None) -> dict[str, Any]:
    """OpenAI's error body, which its SDK reads for every endpoint (``code`` a string)."""
    return {
        "error": {
            "message": message,
            "type": kind,
            "param": None,
            "code": code if code is not None else openai_code(kind),
        }
    }
