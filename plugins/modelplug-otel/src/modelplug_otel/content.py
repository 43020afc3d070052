"""Message content as the conventions' JSON (gen_ai.input.messages and
gen_ai.output.messages), only when the user's own file says ``[otel] capture_content =
true``, and redacted like every output: a key never reaches a trace."""

from __future__ import annotations

import json
import weakref
from typing import TYPE_CHECKING, Any

from modelplug import ConfigError, redact_data

if TYPE_CHECKING:
    from modelplug import Block, CallContext, Message, Request, Response, Settings

_CAPTURE: weakref.WeakKeyDictionary[CallContext, tuple[Settings, bool]] = (
    weakref.WeakKeyDictionary()
)


def capture_content(client: CallContext) -> bool:
    """``[otel] capture_content`` of the user's file (a project file cannot turn it on:
    a cloned repository must not make a user's prompts leave in their traces)."""
    cached = _CAPTURE.get(client)
    if cached is not None and cached[0] is client.settings:
        return cached[1]
    value = client.settings.plugin_options("otel", project=False).get("capture_content", False)
    if not isinstance(value, bool):
        raise ConfigError(f"[otel] capture_content must be true or false, not {value!r}")
    _CAPTURE[client] = (client.settings, value)
    return value


def _part(block: Block) -> dict[str, Any]:
    kind = block.type
    if kind == "text":
        return {"type": "text", "content": block.text}  # type: ignore[union-attr]
    if kind == "thinking":
        return {"type": "reasoning", "content": block.text}  # type: ignore[union-attr]
    if kind == "tool_use":
        return {
            "type": "tool_call",
            "id": block.id,  # type: ignore[union-attr]
            "name": block.name,  # type: ignore[union-attr]
            "arguments": block.input,  # type: ignore[union-attr]
        }
    if kind == "tool_result":
        text = "".join(getattr(c, "text", "") for c in block.content)  # type: ignore[union-attr]
        return {"type": "tool_call_response", "id": block.tool_use_id, "response": text}  # type: ignore[union-attr]
    return {"type": kind}


def _message(message: Message) -> dict[str, Any]:
    return {"role": message.role, "parts": [_part(b) for b in message.content]}


def _dumps(value: Any) -> str:
    return json.dumps(redact_data(value), ensure_ascii=False, default=str)


def input_attributes(request: Request) -> dict[str, str]:
    attributes = {"gen_ai.input.messages": _dumps([_message(m) for m in request.messages])}
    if request.system:
        attributes["gen_ai.system_instructions"] = _dumps(
            [{"type": "text", "content": request.system}]
        )
    return attributes


def output_attributes(response: Response, finish_reason: str) -> dict[str, str]:
    message = {**_message(response.message), "finish_reason": finish_reason}
    return {"gen_ai.output.messages": _dumps([message])}
