"""The Chat Completions request body: messages, tools, options, reasoning dialect."""

from __future__ import annotations

import json
from typing import Any

from modelplug import (
    ImageBlock,
    Message,
    Notice,
    OpaqueBlock,
    Request,
    RequestError,
    Route,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    is_replayable,
)
from modelplug_kit import dropped_sampling, openai_json_schema

from .reasoning import detect_dialect, reasoning_fields
from .services import fit_to_service

__all__ = ["build_body", "to_wire_messages", "unsent_sampling"]

# Delta fields that carry reasoning, in the order a stream is read for them; the one
# that came is kept in the thinking block's wire and goes back under the same name,
# only to the server that produced it.
REASONING_FIELDS = ("reasoning_content", "reasoning")


def _search_text(block: OpaqueBlock) -> str | None:
    """A server-search result from another provider, as titles and URLs."""
    if "search" not in block.kind or "result" not in block.kind:
        return None
    content = block.wire.get("content")
    lines = []
    if isinstance(content, list):
        for item in content:
            if isinstance(item, dict) and item.get("url"):
                title = item.get("title") or item["url"]
                lines.append(f"- {title} ({item['url']})")
    if not lines:
        return block.text
    return "Web search results:\n" + "\n".join(lines)


def _image_part(image: ImageBlock) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": image.as_url()}}


def _assistant(message: Message, target: str) -> dict[str, Any] | None:
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    entry: dict[str, Any] = {"role": "assistant"}
    for block in message.content:
        if isinstance(block, TextBlock):
            text.append(block.text)
        elif isinstance(block, ToolUseBlock):
            arguments = (
                block.input
                if isinstance(block.input, str)
                else json.dumps(block.input, ensure_ascii=False)
            )
            call: dict[str, Any] = {
                "id": block.id,
                "type": "function",
                "function": {"name": block.name, "arguments": arguments},
            }
            if block.wire and _own(block, message, target):
                # Gemini's thought_signature goes back unchanged, to its own model only.
                call.update(block.wire)
            calls.append(call)
        elif isinstance(block, ThinkingBlock):
            # Only this model's own reasoning, and only under the field it came in.
            if is_replayable(block, message, target) and block.wire:
                for name in REASONING_FIELDS:
                    if isinstance(block.wire.get(name), str):
                        entry[name] = entry.get(name, "") + block.wire[name]
        elif isinstance(block, OpaqueBlock) and not is_replayable(block, message, target):
            shown = _search_text(block)
            if shown:
                text.append(shown)
    joined = "".join(text)
    if not joined and not calls and len(entry) == 1:
        return None  # providers refuse an empty assistant message
    entry["content"] = joined or None
    if calls:
        entry["tool_calls"] = calls
    return entry


def _own(call: ToolUseBlock, message: Message, target: str) -> bool:
    """Whether a call's vendor fields may go to ``target``: the replay rule for vendor
    items (only the model that produced them), applied to the call's ``wire``."""
    return is_replayable(OpaqueBlock(kind="tool_call_wire", wire=call.wire or {}), message, target)


def _user(message: Message, target: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            images = block.images
            content = block.text
            if not content:
                content = "(the result is the image(s) below)" if images else "(no output)"
            if block.is_error:
                content = f"Error: {content}"
            out.append({"role": "tool", "tool_call_id": block.tool_use_id, "content": content})
            if images:
                parts.append(
                    {
                        "type": "text",
                        "text": f"[The tool result {block.tool_use_id} included "
                        f"{len(images)} image(s); they follow.]",
                    }
                )
                parts.extend(_image_part(image) for image in images)
        elif isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append(_image_part(block))
        elif isinstance(block, OpaqueBlock) and not is_replayable(block, message, target):
            shown = _search_text(block)
            if shown:
                parts.append({"type": "text", "text": shown})
    if parts:
        if all(p["type"] == "text" for p in parts):
            out.append({"role": "user", "content": "\n\n".join(p["text"] for p in parts)})
        else:
            out.append({"role": "user", "content": parts})
    return out


def to_wire_messages(request: Request, route: Route) -> list[dict[str, Any]]:
    """The conversation as Chat Completions messages for ``route``."""
    target = route.name
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for message in request.messages:
        if message.role == "assistant":
            entry = _assistant(message, target)
            if entry is not None:
                out.append(entry)
        else:
            out.extend(_user(message, target))
    return out


def _tool_choice(choice: str) -> Any:
    if choice in ("auto", "none"):
        return choice
    if choice in ("any", "required"):
        return "required"
    return {"type": "function", "function": {"name": choice}}


# llama.cpp's multiplicative penalty, by server: its own name where the server takes
# it (vLLM and OpenRouter call it repetition_penalty); None where the Chat Completions
# path has no such field (OpenAI refuses unknown fields; Ollama's /v1 reads only the
# OpenAI pair: its native /api/chat, modelplug-ollama, takes repeat_penalty). A server
# not named here, a user's own, gets llama.cpp's name.
REPEAT_PENALTY: dict[str, str | None] = {
    "llamacpp": "repeat_penalty",
    "lmstudio": "repeat_penalty",
    "vllm": "repetition_penalty",
    "openrouter": "repetition_penalty",
    "openai": None,
    "ollama": None,
    # Hosted services by name (see .services): the three that document llama.cpp's
    # penalty take it as repetition_penalty; the others have no such field (Mistral
    # refuses unknown fields with a 422).
    "together": "repetition_penalty",
    "fireworks": "repetition_penalty",
    "deepinfra": "repetition_penalty",
    "mistral": None,
    "groq": None,
    "xai": None,
    "deepseek": None,
    "cerebras": None,
    "perplexity": None,
}


def unsent_sampling(request: Request, route: Route) -> Notice | None:
    """The Notice for a repeat_penalty this route's server has no field for."""
    if REPEAT_PENALTY.get(route.endpoint.server or "", "") is not None:
        return None
    return dropped_sampling(
        route,
        request,
        ["repeat_penalty"],
        f"the {route.endpoint.server} Chat Completions API has no such field",
    )


def build_body(
    request: Request, route: Route, notices: list[Notice] | None = None
) -> dict[str, Any]:
    """The JSON body of POST <base>/chat/completions; a hosted service's own rules
    (:mod:`.services`) applied, and the Notice of what they left out appended to
    ``notices``."""
    body: dict[str, Any] = {
        "model": route.model,
        "messages": to_wire_messages(request, route),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
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
        if request.tool_choice is not None:
            body["tool_choice"] = _tool_choice(request.tool_choice)
    if request.max_tokens is not None:
        # OpenAI's own API refuses max_tokens for its reasoning models.
        to_openai = route.endpoint.server == "openai" or "api.openai.com" in (
            route.endpoint.base_url or ""
        )
        key = "max_completion_tokens" if to_openai else "max_tokens"
        body[key] = request.max_tokens
    if request.stop:
        body["stop"] = list(request.stop)
    for name in ("temperature", "top_p", "top_k", "seed", "frequency_penalty", "presence_penalty"):
        value = getattr(request, name)
        if value is not None:
            body[name] = value
    repeat = REPEAT_PENALTY.get(route.endpoint.server or "", "repeat_penalty")
    if request.repeat_penalty is not None and repeat is not None:
        body[repeat] = request.repeat_penalty
    body.update(
        reasoning_fields(
            detect_dialect(route), request.thinking, route.model, route.endpoint.server
        )
    )
    if request.output_schema is not None:
        body.update(_structured_output(request, route))
    left_out = fit_to_service(body, route)
    if left_out is not None and notices is not None:
        notices.append(left_out)
    body.update(request.extra)
    _refuse_choices(body.get("n"))
    return body


def _structured_output(request: Request, route: Route) -> dict[str, Any]:
    """Native structured output, as each server takes it: llama.cpp's own
    ``json_schema`` field (its grammar reads JSON Schema as given); everywhere else
    OpenAI's ``response_format`` json_schema, in strict form where the schema has one
    (OpenRouter passes it on to the model's provider; vLLM and Ollama build a grammar
    from it)."""
    schema = request.output_schema
    assert schema is not None
    if route.endpoint.server == "llamacpp":
        return {"json_schema": schema.json_schema}
    shaped = openai_json_schema(schema.name, schema.json_schema, schema.strict)
    return {"response_format": {"type": "json_schema", "json_schema": shaped}}


def _refuse_choices(n: Any) -> None:
    """One call, one answer: ``n > 1`` would ask for several choices in one stream."""
    if n is None or n == 1:
        return
    raise RequestError(
        f"n = {n!r} asks for several answers in one call; modelplug returns one answer per "
        "call (make n calls instead, e.g. with asyncio.gather)"
    )
