"""The ``/api/chat`` request body: messages, tools, think, options, keep_alive."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from modelplug import (
    ImageBlock,
    Message,
    Request,
    RequestError,
    Route,
    TextBlock,
    ThinkingBlock,
    ThinkingRequest,
    ToolResultBlock,
    ToolUseBlock,
    is_replayable,
    parse_arguments,
)
from modelplug_kit import PENALTIES

__all__ = ["build_body", "think_value", "to_wire_messages"]

# Ollama's think levels; the neutral efforts in between go to the nearest one below.
THINK_LEVELS = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "max",
}
TOOL_IMAGES_NOTE = "[The tool result {id} included {count} image(s); they follow.]"


def _image_data(image: ImageBlock) -> str:
    """The base64 text Ollama takes in ``images`` (it fetches no URL itself)."""
    if image.data is None and image.url is not None and image.url.startswith("data:"):
        image = ImageBlock.from_data_url(image.url)
    if image.data is None:
        raise RequestError(
            "Ollama takes images as base64 data, not as URLs; load the image and pass "
            "ImageBlock(data=..., media_type=...)"
        )
    try:
        base64.b64decode(image.data, validate=True)
    except (binascii.Error, ValueError):
        raise RequestError("an image's data is not valid base64") from None
    return image.data


def _assistant(message: Message, target: str) -> dict[str, Any] | None:
    text: list[str] = []
    thinking: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            text.append(block.text)
        elif isinstance(block, ToolUseBlock):
            arguments = block.input
            if isinstance(arguments, str):
                # Broken JSON the model wrote: Ollama takes only an object back.
                repaired, _ = parse_arguments(arguments)
                arguments = repaired if isinstance(repaired, dict) else {}
            function = {"index": len(calls), "name": block.name, "arguments": arguments}
            calls.append({"id": block.id, "function": function})
        elif (
            isinstance(block, ThinkingBlock)
            and block.wire
            and is_replayable(block, message, target)
        ):
            # Only this model's own thinking goes back, as the field it came in.
            thought = block.wire.get("thinking")
            if isinstance(thought, str) and thought:
                thinking.append(thought)
    if not text and not calls and not thinking:
        return None
    entry: dict[str, Any] = {"role": "assistant", "content": "".join(text)}
    if thinking:
        entry["thinking"] = "".join(thinking)
    if calls:
        entry["tool_calls"] = calls
    return entry


def _user(message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
    """A user message: its tool results first (one ``tool`` message each, whose content
    can only be text), then the user's text with the images, the tool results' among
    them, introduced by a note."""
    out: list[dict[str, Any]] = []
    text: list[str] = []
    images: list[str] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            content = block.text
            if not content:
                content = "(the result is the image(s) below)" if block.images else "(no output)"
            if block.is_error:
                content = f"Error: {content}"
            entry: dict[str, Any] = {
                "role": "tool",
                "content": content,
                "tool_call_id": block.tool_use_id,
            }
            name = names.get(block.tool_use_id)
            if name:
                entry["tool_name"] = name
            out.append(entry)
            if block.images:
                text.append(TOOL_IMAGES_NOTE.format(id=block.tool_use_id, count=len(block.images)))
                images.extend(_image_data(image) for image in block.images)
        elif isinstance(block, TextBlock):
            text.append(block.text)
        elif isinstance(block, ImageBlock):
            images.append(_image_data(block))
    if text or images:
        entry = {"role": "user", "content": "\n\n".join(text)}
        if images:
            entry["images"] = images
        out.append(entry)
    return out


def to_wire_messages(request: Request, route: Route) -> list[dict[str, Any]]:
    """The conversation as ``/api/chat`` messages for ``route``."""
    target = route.name
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    names: dict[str, str] = {}  # tool_use id -> tool name, for tool_name in results
    for message in request.messages:
        if message.role == "assistant":
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    names[block.id] = block.name
            entry = _assistant(message, target)
            if entry is not None:
                out.append(entry)
        else:
            out.extend(_user(message, names))
    return out


def think_value(thinking: ThinkingRequest | None) -> bool | str | None:
    """``think`` for a ThinkingRequest: false, an effort level, or true (None: ask
    nothing, the model's default)."""
    if thinking is None:
        return None
    if not thinking.enabled:
        return False
    if thinking.effort is not None:
        return THINK_LEVELS[thinking.effort]
    return True


def build_body(
    request: Request,
    route: Route,
    *,
    num_ctx: int | None,
    keep_alive: str | int | None,
    can_think: bool | None,
    send_tools: bool = True,
) -> dict[str, Any]:
    """The JSON body of ``POST <base>/api/chat``.

    :param num_ctx: the context window to load the model with (None: the server's).
    :param keep_alive: how long Ollama keeps the model loaded after the call.
    :param can_think: what a probe said about thinking (None: not known). ``think``
        is left out for a model that cannot think: Ollama refuses it there.
    :param send_tools: False for a model that cannot call tools: Ollama refuses a
        request with ``tools`` there, so they are left out.
    """
    body: dict[str, Any] = {
        "model": route.model,
        "messages": to_wire_messages(request, route),
        "stream": True,
    }
    if send_tools and request.tools and request.tool_choice != "none":
        # Ollama has no tool_choice: "none" is honoured by sending no tools.
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                },
            }
            for t in request.tools
        ]
    think = think_value(request.thinking)
    if think is not None and can_think is not False:
        body["think"] = think
    options: dict[str, Any] = {}
    if num_ctx is not None:
        options["num_ctx"] = num_ctx
    if request.max_tokens is not None:
        options["num_predict"] = request.max_tokens
    sampling = ("temperature", "top_p", "top_k", "seed", *PENALTIES)
    for name in sampling:
        value = getattr(request, name)
        if value is not None:
            options[name] = value
    if request.stop:
        options["stop"] = list(request.stop)
    if keep_alive is not None:
        body["keep_alive"] = keep_alive
    if request.output_schema is not None:
        # Native structured output: Ollama constrains decoding to the JSON schema (its
        # grammar takes JSON Schema as it is, references included).
        body["format"] = request.output_schema.json_schema
    extra = dict(request.extra)
    more = extra.pop("options", None)
    if isinstance(more, dict):
        options.update(more)  # the caller's own options win over the mapped ones
    elif more is not None:
        raise RequestError("Request.extra['options'] must be a dict of Ollama options")
    if options:
        body["options"] = options
    body.update(extra)
    return body
