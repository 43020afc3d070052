"""The JSON body of ``POST /model/{id}/converse-stream`` from a neutral Request.

The member names are botocore's service model's for ``ConverseStream`` (the JSON wire
uses the same names; the tests validate bodies against that model). Blobs (image bytes,
redacted reasoning) travel base64-encoded, as the REST-JSON protocol sends them.
"""

from __future__ import annotations

from typing import Any

from modelplug import (
    ImageBlock,
    Message,
    Request,
    RequestError,
    Route,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    replayable_messages,
)

from .budget import claude_budget, fit_thinking
from .providers import takes_cache_points

__all__ = ["TOP_LEVEL", "build_body"]

IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}
CACHE_POINT = {"cachePoint": {"type": "default"}}
# Request.extra keys that are ConverseStream's own members; every other key goes to the
# model in additionalModelRequestFields.
TOP_LEVEL = frozenset(
    {
        "guardrailConfig",
        "performanceConfig",
        "promptVariables",
        "requestMetadata",
        "additionalModelResponseFieldPaths",
        "serviceTier",
    }
)


def build_body(request: Request, route: Route) -> dict[str, Any]:
    """The ConverseStream body. A Claude thinking budget that does not fit under the
    caller's maxTokens is fitted first (:func:`~modelplug_bedrock.budget.fit_thinking`
    says what it changed)."""
    request, _ = fit_thinking(request, route)
    cache = bool(request.cache) and takes_cache_points(route.model)
    body: dict[str, Any] = {"messages": _messages(request, route, cache)}
    if request.system:
        body["system"] = [{"text": request.system}, *([CACHE_POINT] if cache else [])]
    config: dict[str, Any] = {}
    if request.max_tokens is not None:
        config["maxTokens"] = request.max_tokens
    if request.temperature is not None:
        config["temperature"] = request.temperature
    if request.top_p is not None:
        config["topP"] = request.top_p
    if request.stop:
        config["stopSequences"] = list(request.stop)
    if config:
        body["inferenceConfig"] = config
    tools = _tool_config(request, body["messages"], cache)
    if tools is not None:
        body["toolConfig"] = tools
    fields = _model_fields(request, route)
    for key, value in request.extra.items():
        if key in TOP_LEVEL:
            body[key] = value
        elif key == "additionalModelRequestFields":
            if not isinstance(value, dict):
                raise RequestError("Request.extra['additionalModelRequestFields'] must be a dict")
            fields.update(value)
        else:
            fields[key] = value
    if fields:
        body["additionalModelRequestFields"] = fields
    return body


def _model_fields(request: Request, route: Route) -> dict[str, Any]:
    """What Converse has no member for: Claude's thinking and top_k."""
    fields: dict[str, Any] = {}
    claude = "anthropic." in route.model
    budget = claude_budget(request, route)
    if budget is not None:
        fields["thinking"] = {"type": "enabled", "budget_tokens": budget}
    if request.top_k is not None:
        fields["top_k" if claude else "topK"] = request.top_k
    return fields


def _tool_config(
    request: Request, messages: list[dict[str, Any]], cache: bool
) -> dict[str, Any] | None:
    # Bedrock refuses a conversation holding tool blocks without a toolConfig, so
    # "none" drops the tools only from a conversation that has none yet.
    used = any("toolUse" in b or "toolResult" in b for m in messages for b in m["content"])
    if not request.tools or (request.tool_choice == "none" and not used):
        return None
    tools: list[dict[str, Any]] = [
        {
            "toolSpec": {
                "name": t.name,
                **({"description": t.description} if t.description else {}),
                "inputSchema": {"json": t.input_schema},
            }
        }
        for t in request.tools
    ]
    if cache:
        tools.append(CACHE_POINT)
    config: dict[str, Any] = {"tools": tools}
    choice = request.tool_choice
    if choice == "any":
        config["toolChoice"] = {"any": {}}
    elif choice not in (None, "auto", "none"):
        config["toolChoice"] = {"tool": {"name": choice}}
    return config


def _messages(request: Request, route: Route, cache: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in replayable_messages(request.messages, route):
        content = [b for b in (_block(x, message) for x in message.content) if b is not None]
        if not content:
            continue
        if out and out[-1]["role"] == message.role:
            out[-1]["content"].extend(content)  # Converse wants roles to alternate
        else:
            out.append({"role": message.role, "content": content})
    if cache and out and out[-1]["role"] == "user":
        out[-1]["content"].append(CACHE_POINT)
    return out


def _block(block: Any, message: Message) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"text": block.text} if block.text else None
    if isinstance(block, ImageBlock):
        return {"image": _image(block)}
    if isinstance(block, ToolUseBlock):
        value = block.input
        if isinstance(value, str):
            # Broken JSON the model wrote: sent back as it was, inside an object.
            value = {"_raw": value}
        return {"toolUse": {"toolUseId": block.id, "name": block.name, "input": value}}
    if isinstance(block, ToolResultBlock):
        parts: list[dict[str, Any]] = [
            {"text": p.text} if isinstance(p, TextBlock) else {"image": _image(p)}
            for p in block.content
        ]
        return {
            "toolResult": {
                "toolUseId": block.tool_use_id,
                "content": parts or [{"text": ""}],
                "status": "error" if block.is_error else "success",
            }
        }
    if isinstance(block, ThinkingBlock):
        # Only the model's own (replayable_messages kept it): its wire byte for byte.
        if block.wire is not None and "reasoningContent" in block.wire:
            return {"reasoningContent": block.wire["reasoningContent"]}
        if block.text and block.signature:
            text = {"text": block.text, "signature": block.signature}
            return {"reasoningContent": {"reasoningText": text}}
        return None
    return None  # opaque items of other APIs do not travel to Bedrock


def _image(block: ImageBlock) -> dict[str, Any]:
    kind = IMAGE_FORMATS.get((block.media_type or "").lower())
    if block.data is None or kind is None:
        raise RequestError(
            "Bedrock takes images as png, jpeg, gif or webp bytes (base64 data with its "
            "media_type), not a URL"
        )
    return {"format": kind, "source": {"bytes": block.data}}
