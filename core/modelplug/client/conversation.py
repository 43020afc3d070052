"""What a caller passes as a conversation, made a Request.

:func:`as_request` takes a string, a Request, a dict of Request fields, or a list of
messages: neutral Messages or OpenAI-style dicts, the shape most callers already hold
(``system``, ``user`` with ``image_url`` parts, ``assistant`` with ``tool_calls``,
``tool``), converted exactly; :func:`to_openai_messages` goes the other way. This is the
client's reading of its caller, not a provider's wire format: the contract's types know
no vendor's shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from modelplug.contract.types import (
    ImageBlock,
    Message,
    Request,
    RequestLike,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    new_tool_use_id,
)

__all__ = ["as_request", "from_openai_messages", "to_openai_messages"]


def as_request(value: RequestLike, **fields: Any) -> Request:
    """Turn what a caller passed into a Request.

    - a string: one user message;
    - a list of OpenAI-style dicts or Messages: the conversation (a ``system`` role
      message becomes ``Request.system``);
    - a dict: the fields of a Request (its ``messages`` may be OpenAI-style);
    - a Request: itself (copied with ``fields`` applied).
    """
    if isinstance(value, Request):
        return value.model_copy(update=fields) if fields else value
    if isinstance(value, str):
        return Request(messages=[Message(role="user", content=[TextBlock(text=value)])], **fields)
    if isinstance(value, Mapping):
        data = dict(value)
        if "messages" in data and isinstance(data["messages"], list):
            system, messages = from_openai_messages(data["messages"])
            data["messages"] = messages
            if system:
                data["system"] = "\n\n".join(p for p in (data.get("system"), system) if p)
        data.update(fields)
        return Request.model_validate(data)
    if isinstance(value, Iterable):
        system, messages = from_openai_messages(list(value))
        if system and "system" not in fields:
            fields["system"] = system
        return Request(messages=messages, **fields)
    raise TypeError(
        f"cannot build a Request from {type(value).__name__}; pass a string, a list "
        "of messages, a dict of Request fields or a Request"
    )


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
    """``request``'s conversation as OpenAI Chat Completions messages (its ``system``
    first), for tools and logs that speak that shape: :func:`as_request` reads it back."""
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
