"""OpenAI-style message dicts to and from the neutral model.

``Request.coerce`` accepts Chat Completions messages (``system``, ``user`` with
``image_url`` parts, ``assistant`` with ``tool_calls``, ``tool``) and converts them
exactly; ``Request.to_openai_messages`` goes the other way. Apart from types.py so that
the neutral model reads as a list of types.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from modelplug.contract.types import (
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    new_tool_use_id,
)

if TYPE_CHECKING:
    from modelplug.contract.types import Request

__all__ = ["from_openai_messages", "is_openai_style", "to_openai_messages"]


def is_openai_style(value: Any) -> bool:
    if not isinstance(value, Mapping):
        return False
    role = value.get("role")
    if role in ("system", "tool", "developer"):
        return True
    if "tool_calls" in value or "tool_call_id" in value:
        return True
    content = value.get("content")
    if isinstance(content, list):
        return any(
            isinstance(p, Mapping) and p.get("type") in ("image_url", "input_text") for p in content
        )
    return False


def _openai_parts(content: Any, where: str) -> list[TextBlock | ImageBlock]:
    if content is None:
        return []
    if isinstance(content, str):
        return [TextBlock(text=content)] if content else []
    parts: list[TextBlock | ImageBlock] = []
    for i, part in enumerate(content):
        if isinstance(part, TextBlock | ImageBlock):
            parts.append(part)
            continue
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind in ("text", "input_text"):
            parts.append(TextBlock(text=part["text"]))
        elif kind == "image_url":
            image = part["image_url"]
            url = image["url"] if isinstance(image, Mapping) else image
            parts.append(ImageBlock.from_data_url(url))
        elif kind == "image":
            parts.append(ImageBlock.model_validate(part))
        else:
            raise ValueError(
                f"{where}: content part {i} has type {kind!r}; expected 'text' or 'image_url'"
            )
    return parts


def _parse_arguments(raw: Any) -> dict[str, Any] | str:
    if isinstance(raw, Mapping):
        return dict(raw)
    if raw is None or raw == "":
        return {}
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return str(raw)
    return value if isinstance(value, dict) else str(raw)


def from_openai_messages(items: list[Any]) -> tuple[str | None, list[Message]]:
    """Convert OpenAI Chat Completions messages exactly; Messages pass through."""
    system: list[str] = []
    messages: list[Message] = []
    for index, item in enumerate(items):
        where = f"messages[{index}]"
        if isinstance(item, Message):
            messages.append(item)
            continue
        if not isinstance(item, Mapping):
            raise ValueError(f"{where}: expected a message dict, got {type(item).__name__}")
        role = item.get("role")
        if role in ("system", "developer"):
            text = "".join(
                p.text
                for p in _openai_parts(item.get("content"), where)
                if isinstance(p, TextBlock)
            )
            system.append(text)
        elif role == "tool":
            call_id = item.get("tool_call_id")
            if not call_id:
                raise ValueError(f"{where}: a tool message needs its tool_call_id")
            result = ToolResultBlock(
                tool_use_id=call_id,
                content=_openai_parts(item.get("content"), where),
                is_error=bool(item.get("is_error", False)),
            )
            # Consecutive tool messages answer one assistant turn: one user message.
            last = messages[-1] if messages else None
            if (
                last is not None
                and last.role == "user"
                and last.tool_results
                and all(isinstance(b, ToolResultBlock) for b in last.content)
            ):
                last.content.append(result)
            else:
                messages.append(Message(role="user", content=[result]))
        elif role == "assistant":
            content: list[Any] = list(_openai_parts(item.get("content"), where))
            for call in item.get("tool_calls") or []:
                function = call.get("function", {})
                content.append(
                    ToolUseBlock(
                        id=call.get("id") or new_tool_use_id(),
                        name=function.get("name", ""),
                        input=_parse_arguments(function.get("arguments")),
                    )
                )
            messages.append(Message(role="assistant", content=content, model=item.get("model")))
        elif role == "user":
            if "content" in item and not isinstance(item.get("content"), str | list | None):
                raise ValueError(f"{where}: content must be a string or a list of parts")
            raw_content = item.get("content")
            if isinstance(raw_content, list) and all(
                isinstance(p, Mapping) and p.get("type") in _NEUTRAL_TYPES for p in raw_content
            ):
                messages.append(Message.model_validate(dict(item)))
            else:
                messages.append(
                    Message(role="user", content=list(_openai_parts(raw_content, where)))
                )
        else:
            raise ValueError(f"{where}: unknown role {role!r}; use system, user, assistant or tool")
    return ("\n\n".join(system) if system else None), messages


_NEUTRAL_TYPES = {"text", "thinking", "tool_use", "tool_result", "image", "opaque"}


def to_openai_messages(request: Request) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for message in request.messages:
        if message.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            calls = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {
                        "name": c.name,
                        "arguments": c.input
                        if isinstance(c.input, str)
                        else json.dumps(c.input, ensure_ascii=False),
                    },
                }
                for c in message.tool_calls
            ]
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
            continue
        for result in message.tool_results:
            out.append({"role": "tool", "tool_call_id": result.tool_use_id, "content": result.text})
        parts: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append({"type": "text", "text": block.text})
            elif isinstance(block, ImageBlock):
                parts.append({"type": "image_url", "image_url": {"url": block.as_url()}})
        if parts:
            if len(parts) == 1 and parts[0]["type"] == "text":
                out.append({"role": "user", "content": parts[0]["text"]})
            else:
                out.append({"role": "user", "content": parts})
    return out
