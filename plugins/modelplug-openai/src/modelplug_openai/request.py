"""The Responses API request body: instructions, input items, tools, options.

Reasoning items and other vendor items go back exactly as they came, and only to the
model that produced them (:func:`modelplug.is_replayable`); another model gets
none of them. Text, tool calls, tool results and images are portable.

Assistant text goes as a message item of ``output_text`` parts, the form every
Responses server reads (llama.cpp's refuses ``{"role": "assistant", "content": "..."}``
with "Cannot determine type of 'item'"). It has no ``id`` or ``status``: OpenAI takes
the item without them (the Codex CLI sends it so), and an id would only name an item
that with ``store: false`` was never kept. Each text block is one part, so the
annotations of the model's own text (``url_citation`` ...) go back as they came, their
indexes still counting within that part's text; another model's citations do not.
"""

from __future__ import annotations

import json
from typing import Any

from modelplug import (
    ImageBlock,
    Message,
    OpaqueBlock,
    Request,
    Route,
    ServerTool,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    is_replayable,
)
from modelplug_kit import PENALTIES, openai_json_schema

from .models import effort_for, effort_of_budget, reasons
from .options import Options

__all__ = ["OPAQUE_PREFIX", "REASONING", "build_body", "input_items", "unsupported_fields"]

# OpaqueBlock kinds this plugin writes: "openai." + the output item's type.
OPAQUE_PREFIX = "openai."
REASONING = "reasoning"
ENCRYPTED = "reasoning.encrypted_content"
# Servers that take a call's output only as text: llama.cpp's /v1/responses refuses an
# image in it ("Output of tool call should be 'Input text'", tools/server/server-chat.cpp),
# so a result's images follow the outputs in a user message, as its chat endpoint gets them.
TEXT_ONLY_OUTPUTS = frozenset({"llamacpp"})


def _image(image: ImageBlock) -> dict[str, Any]:
    return {"type": "input_image", "image_url": image.as_url(), "detail": "auto"}


def _own_item(block: ThinkingBlock | OpaqueBlock, stored: bool) -> dict[str, Any] | None:
    """The vendor item a block carries, when it is one of this API's items and can go
    back: with nothing stored on OpenAI's side (``store: false``) a reasoning item
    without its encrypted content is only an id the API cannot find, and it refuses
    the request ("Item with id 'rs_...' not found"), so such an item is left out,
    unless it carries its reasoning itself (``content``: an open-weight model's server,
    llama.cpp's with ``encrypted_content: ""``), which its server reads back."""
    wire = block.wire
    if not isinstance(wire, dict) or not isinstance(wire.get("type"), str):
        return None
    if isinstance(block, ThinkingBlock):
        if wire["type"] != REASONING:
            return None
        kept = stored or wire.get("encrypted_content") or _carries_its_reasoning(wire)
        return wire if kept else None
    return wire if block.kind.startswith(OPAQUE_PREFIX) else None


def _carries_its_reasoning(item: dict[str, Any]) -> bool:
    # llama.cpp reads the first part's text and refuses an empty or text-less content
    # ("item['content'] is empty"), so only an item whose first part has text counts.
    content = item.get("content")
    first = content[0] if isinstance(content, list) and content else None
    return isinstance(first, dict) and isinstance(first.get("text"), str) and bool(first["text"])


def _search_text(block: OpaqueBlock) -> str | None:
    """Another provider's web search results, as titles and URLs, for this model."""
    if "search" not in block.kind:
        return None
    content = block.wire.get("content")
    lines = [
        f"- {item.get('title') or item['url']} ({item['url']})"
        for item in (content if isinstance(content, list) else [])
        if isinstance(item, dict) and isinstance(item.get("url"), str)
    ]
    return "Web search results:\n" + "\n".join(lines) if lines else block.text


def _output_text(text: str, annotations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": annotations or []}


def _assistant(message: Message, target: str, stored: bool) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    own = message.model == target  # citations are this API's annotations only then

    def flush() -> None:
        if parts:
            items.append({"type": "message", "role": "assistant", "content": parts.copy()})
            parts.clear()

    for block in message.content:
        if isinstance(block, TextBlock):
            annotations = block.citations if own else None
            if block.text or annotations:
                parts.append(_output_text(block.text, annotations))
        elif isinstance(block, ToolUseBlock):
            flush()
            arguments = (
                block.input
                if isinstance(block.input, str)
                else json.dumps(block.input, ensure_ascii=False)
            )
            items.append(
                {
                    "type": "function_call",
                    "call_id": block.id,
                    "name": block.name,
                    "arguments": arguments,
                }
            )
        elif isinstance(block, ThinkingBlock | OpaqueBlock):
            if is_replayable(block, message, target):
                item = _own_item(block, stored)
                if item is not None:
                    flush()
                    items.append(item)  # as it came, encrypted content included
            elif isinstance(block, OpaqueBlock):
                shown = _search_text(block)
                if shown:
                    parts.append(_output_text(shown))
    flush()
    return items


def _tool_output(result: ToolResultBlock, images_apart: bool) -> str | list[dict[str, Any]]:
    text = result.text
    images = result.images
    if images and images_apart and not text:
        text = "(the result is the image(s) below)"
    if result.is_error:
        text = f"Error: {text}" if text else "Error"
    if not images or images_apart:
        return text or "(no output)"
    parts: list[dict[str, Any]] = [{"type": "input_text", "text": text}] if text else []
    parts.extend(_image(image) for image in images)
    return parts


def _images_after(result: ToolResultBlock) -> list[dict[str, Any]]:
    """A result's images as user input parts, announced by a line naming the call."""
    images = result.images
    note = f"[The tool result {result.tool_use_id} included {len(images)} image(s); they follow.]"
    return [{"type": "input_text", "text": note}, *(_image(image) for image in images)]


def _user(
    message: Message, target: str, stored: bool, images_apart: bool = False
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": block.tool_use_id,
                    "output": _tool_output(block, images_apart),
                }
            )
            if images_apart and block.images:
                parts.extend(_images_after(block))
        elif isinstance(block, TextBlock):
            parts.append({"type": "input_text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append(_image(block))
        elif isinstance(block, OpaqueBlock):
            if is_replayable(block, message, target):
                item = _own_item(block, stored)
                if item is not None:
                    items.append(item)
            else:
                shown = _search_text(block)
                if shown:
                    parts.append({"type": "input_text", "text": shown})
    if parts:
        items.append({"role": "user", "content": parts})
    return items


def input_items(request: Request, route: Route, stored: bool = False) -> list[dict[str, Any]]:
    """The conversation as Responses API input items for ``route`` (``stored``: the
    request says ``store: true``)."""
    target = route.name
    images_apart = route.endpoint.server in TEXT_ONLY_OUTPUTS
    items: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role == "assistant":
            items.extend(_assistant(message, target, stored))
        else:
            items.extend(_user(message, target, stored, images_apart))
    return items


def _tool_choice(choice: str) -> Any:
    if choice in ("auto", "none"):
        return choice
    if choice in ("any", "required"):
        return "required"
    return {"type": "function", "name": choice}


def _server_tool(tool: ServerTool) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "web_search"}
    if tool.allowed_domains:
        entry["filters"] = {"allowed_domains": list(tool.allowed_domains)}
    return entry


def _reasoning(request: Request, route: Route, options: Options) -> dict[str, Any] | None:
    thinking = request.thinking
    if thinking is None:
        return None
    out: dict[str, Any] = {}
    asked = thinking.effort or effort_of_budget(thinking.budget_tokens)
    effort = effort_for(route.model, asked, thinking.enabled)
    if effort is not None:
        out["effort"] = effort
    shown = thinking.enabled and not thinking.hide and thinking.display != "omitted"
    if shown and effort != "none":
        out["summary"] = options.reasoning_summary
    return out or None


def unsupported_fields(request: Request, route: Route) -> list[str]:
    """Request fields the Responses API (or this model) has no place for; they are
    left out of the body and named in a Notice."""
    names = []
    if request.stop:
        names.append("stop")
    if request.top_k is not None:
        names.append("top_k")
    if request.seed is not None:
        names.append("seed")
    # No penalties at all in the Responses API (the openai SDK's create params have none).
    names.extend(n for n in PENALTIES if getattr(request, n) is not None)
    if reasons(route.model):
        names.extend(n for n in ("temperature", "top_p") if getattr(request, n) is not None)
    for tool in request.server_tools:
        if tool.blocked_domains:
            names.append("server_tools.blocked_domains")
        if tool.max_uses is not None:
            names.append("server_tools.max_uses")
    return names


def build_body(request: Request, route: Route, options: Options) -> dict[str, Any]:
    """The JSON body of ``POST <base>/responses``."""
    body: dict[str, Any] = {
        "model": route.model,
        "input": input_items(request, route, options.store),
        "stream": True,
        "store": options.store,
    }
    if request.system:
        body["instructions"] = request.system
    tools: list[dict[str, Any]] = [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": t.input_schema,
            "strict": options.strict_tools,
        }
        for t in request.tools
    ]
    tools.extend(_server_tool(t) for t in request.server_tools)
    if tools:
        body["tools"] = tools
        if request.tool_choice is not None:
            body["tool_choice"] = _tool_choice(request.tool_choice)
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    if not reasons(route.model):
        for name in ("temperature", "top_p"):
            value = getattr(request, name)
            if value is not None:
                body[name] = value
    reasoning = _reasoning(request, route, options)
    if reasoning is not None:
        body["reasoning"] = reasoning
    thinks = request.thinking is not None and request.thinking.enabled
    if reasons(route.model) or thinks:
        # The reasoning items then come with their encrypted content, so they can go
        # back in the next request with nothing stored on OpenAI's side.
        body["include"] = [ENCRYPTED]
    if options.prompt_cache_key:
        body["prompt_cache_key"] = options.prompt_cache_key
    if request.output_schema is not None:
        # Native structured output: strict json_schema where the schema has a strict
        # form, else guided (strict false); core validates the answer either way.
        schema = request.output_schema
        shaped = openai_json_schema(schema.name, schema.json_schema, schema.strict)
        body["text"] = {"format": {"type": "json_schema", **shaped}}
    body.update(request.extra)
    return body
