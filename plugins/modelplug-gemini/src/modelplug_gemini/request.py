"""The ``generateContent`` body for a Request.

Replay rules (see the README): thought summaries (ThinkingBlocks) never go back to any
model; a thought signature (an OpaqueBlock of kind ``gemini_signature`` right after the
block whose part carried it) goes back on that same part, unchanged, only to the model
that wrote it (``is_replayable``). For a Gemini 3 model, a function call of the current
turn that has no signature of its own (another model made it) carries Google's
documented placeholder, since Gemini 3 refuses such a turn otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from modelplug import (
    ImageBlock,
    Message,
    OpaqueBlock,
    OutputSchema,
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

from .budget import fit_thinking, thinking_budget
from .routes import model_generation, thinking_mode
from .schema import to_gemini_schema

__all__ = [
    "FOREIGN_SIGNATURE",
    "GENERATED_ID_PREFIX",
    "PART_KIND",
    "SIGNATURE_KIND",
    "build_body",
]

SIGNATURE_KIND = "gemini_signature"
PART_KIND = "gemini_part"  # a part with no neutral form (code execution, inline data)
GENERATED_ID_PREFIX = "gemini_call_"
# The placeholder Google documents for function calls the model did not make itself.
FOREIGN_SIGNATURE = "skip_thought_signature_validator"

_MODES = {"auto": "AUTO", "any": "ANY", "none": "NONE"}


def _image_part(image: ImageBlock) -> dict[str, Any]:
    if image.data is not None:
        return {"inlineData": {"mimeType": image.media_type, "data": image.data}}
    file: dict[str, Any] = {"fileUri": image.url}
    if image.media_type:
        file["mimeType"] = image.media_type
    return {"fileData": file}


def _sends_ids(message: Message, route: Route) -> bool:
    """Call ids go back only to the model that gave them; another gets the calls
    without ids and matches results by name and order, as Gemini does."""
    return message.model == route.name


def _call_part(block: ToolUseBlock, send_id: bool) -> dict[str, Any]:
    if isinstance(block.input, str):
        # Broken JSON another model wrote: repaired if it can be, else kept as text.
        arguments, _ = parse_arguments(block.input)
        args = arguments if isinstance(arguments, dict) else {"arguments": block.input}
    else:
        args = block.input
    call: dict[str, Any] = {"name": block.name, "args": args}
    if send_id and not block.id.startswith(GENERATED_ID_PREFIX):
        call["id"] = block.id
    return {"functionCall": call}


def _model_parts(message: Message, route: Route) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    # The part each signature belongs to is the one built from the block right before it.
    owner: dict[str, Any] | None = None
    send_id = _sends_ids(message, route)
    for block in message.content:
        if isinstance(block, OpaqueBlock):
            if not is_replayable(block, message, route.name):
                owner = None
                continue
            if block.kind == PART_KIND:
                owner = dict(block.wire)
                parts.append(owner)
                continue
            if block.kind != SIGNATURE_KIND:
                continue
            signature = block.wire.get("thoughtSignature")
            if not isinstance(signature, str):
                continue
            if owner is not None and "thoughtSignature" not in owner:
                owner["thoughtSignature"] = signature
            else:
                parts.append({"text": "", "thoughtSignature": signature})
            owner = None
            continue
        owner = None
        if isinstance(block, ThinkingBlock):
            continue  # thought summaries are for display only, never replayed
        if isinstance(block, TextBlock):
            owner = {"text": block.text}
        elif isinstance(block, ToolUseBlock):
            owner = _call_part(block, send_id)
        elif isinstance(block, ImageBlock):
            owner = _image_part(block)
        else:
            continue
        parts.append(owner)
    return [p for p in parts if p.get("text", None) != "" or "thoughtSignature" in p]


def _result_response(result: ToolResultBlock) -> dict[str, Any]:
    text = result.text
    if result.is_error:
        return {"error": text}
    try:
        value = json.loads(text) if text.strip().startswith("{") else None
    except ValueError:
        value = None
    # A JSON object result is given as the object; anything else as its text.
    return value if isinstance(value, dict) else {"output": text}


def _user_parts(message: Message, previous: Message | None, route: Route) -> list[dict[str, Any]]:
    calls = {c.id: c for c in previous.tool_calls} if previous is not None else {}
    send_id = previous is not None and _sends_ids(previous, route)
    responses: list[dict[str, Any]] = []
    after: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            call = calls.get(block.tool_use_id)
            name = call.name if call is not None else block.tool_use_id
            response: dict[str, Any] = {"name": name, "response": _result_response(block)}
            if send_id and not block.tool_use_id.startswith(GENERATED_ID_PREFIX):
                response["id"] = block.tool_use_id
            responses.append({"functionResponse": response})
            # Images a tool returned go right after the function responses (seed 001):
            # every Gemini model reads inline data there.
            after.extend(_image_part(image) for image in block.images)
        elif isinstance(block, TextBlock):
            if block.text:
                after.append({"text": block.text})
        elif isinstance(block, ImageBlock):
            after.append(_image_part(block))
    return responses + after


def _current_turn_start(messages: list[Message]) -> int:
    """The index of the last user message that is not only tool results: Gemini 3
    checks the signatures of the calls after it."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user" and any(
            not isinstance(b, ToolResultBlock) for b in message.content
        ):
            return index
    return 0


def _mark_foreign_calls(contents: list[dict[str, Any]], start: int) -> None:
    for content in contents[start:]:
        if content["role"] != "model":
            continue
        for part in content["parts"]:
            if "functionCall" in part:
                part.setdefault("thoughtSignature", FOREIGN_SIGNATURE)
                break  # only the first call of a step needs one


def contents_of(request: Request, route: Route) -> list[dict[str, Any]]:
    contents: list[dict[str, Any]] = []
    previous: Message | None = None
    turn_start = _current_turn_start(request.messages)
    first_of_turn: int | None = None
    for index, message in enumerate(request.messages):
        if message.role == "assistant":
            parts = _model_parts(message, route)
            role = "model"
        else:
            parts = _user_parts(message, previous, route)
            role = "user"
        previous = message
        if index >= turn_start and first_of_turn is None:
            first_of_turn = len(contents)
        if parts:
            contents.append({"role": role, "parts": parts})
    generation = model_generation(route.model)
    if generation is not None and generation >= (3, 0) and first_of_turn is not None:
        _mark_foreign_calls(contents, first_of_turn)
    return contents


def _thinking_config(thinking: ThinkingRequest, model: str) -> dict[str, Any]:
    config: dict[str, Any] = {}
    generation = model_generation(model) or (2, 5)
    pro = "pro" in model
    if not thinking.enabled:
        if generation >= (3, 0):
            config["thinkingLevel"] = "low" if pro else "minimal"
        else:
            # 2.5 Pro cannot stop thinking: its smallest budget is 128 tokens.
            config["thinkingBudget"] = 0 if thinking_mode(model) != "always" else 128
        return config
    budget = thinking_budget(thinking, model)
    if budget is not None:
        config["thinkingBudget"] = budget
    elif thinking.effort is not None and generation >= (3, 0):
        effort = thinking.effort
        if pro:
            config["thinkingLevel"] = "low" if effort in ("minimal", "low") else "high"
        else:
            kept = effort in ("minimal", "low", "medium")
            config["thinkingLevel"] = effort if kept else "high"
    if not thinking.hide and thinking.display != "omitted":
        config["includeThoughts"] = True
    return config


def _tools(request: Request) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    if request.tools:
        declarations = []
        for spec in request.tools:
            declaration: dict[str, Any] = {"name": spec.name}
            if spec.description:
                declaration["description"] = spec.description
            parameters = to_gemini_schema(spec.name, spec.input_schema)
            if parameters is not None:
                declaration["parameters"] = parameters
            declarations.append(declaration)
        tools.append({"functionDeclarations": declarations})
    for server_tool in request.server_tools:
        if server_tool.type != "web_search":
            raise RequestError(f"Gemini has no server tool {server_tool.type!r}")
        if server_tool.allowed_domains:
            raise RequestError(
                "Gemini's googleSearch tool cannot be limited to allowed_domains; "
                "use blocked_domains (sent as excludeDomains) or leave it unset"
            )
        search: dict[str, Any] = {}
        if server_tool.blocked_domains:
            search["excludeDomains"] = list(server_tool.blocked_domains)
        tools.append({"googleSearch": search})
    return tools


def _tool_config(request: Request) -> dict[str, Any] | None:
    choice = request.tool_choice
    if choice is None or not request.tools:
        return None
    if choice in _MODES:
        return {"functionCallingConfig": {"mode": _MODES[choice]}}
    return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [choice]}}


def _generation_config(request: Request, route: Route) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if request.max_tokens is not None:
        config["maxOutputTokens"] = request.max_tokens
    if request.temperature is not None:
        config["temperature"] = request.temperature
    if request.top_p is not None:
        config["topP"] = request.top_p
    if request.top_k is not None:
        config["topK"] = request.top_k
    if request.stop:
        config["stopSequences"] = list(request.stop)
    if request.seed is not None:
        config["seed"] = request.seed
    # The OpenAI pair; llama.cpp's repeat_penalty has no field here (see stream.py).
    if request.frequency_penalty is not None:
        config["frequencyPenalty"] = request.frequency_penalty
    if request.presence_penalty is not None:
        config["presencePenalty"] = request.presence_penalty
    if request.output_schema is not None:
        config.update(_structured_output(request.output_schema))
    if request.thinking is not None and thinking_mode(route.model) != "never":
        # A model that cannot think (2.0 and older) refuses any thinkingConfig.
        thinking = _thinking_config(request.thinking, route.model)
        if thinking:
            config["thinkingConfig"] = thinking
    return config


def _structured_output(schema: OutputSchema) -> dict[str, Any]:
    """Native structured output: JSON constrained to the schema, in the OpenAPI subset
    of ``responseSchema`` when it fits; else, unchanged, as ``responseJsonSchema`` (the
    API's JSON Schema field, which takes what the subset cannot say: patterns of
    properties, unions of several types, references)."""
    config: dict[str, Any] = {"responseMimeType": "application/json"}
    try:
        converted = to_gemini_schema(schema.name, schema.json_schema)
    except RequestError:
        config["responseJsonSchema"] = schema.json_schema
        return config
    config["responseSchema"] = converted if converted is not None else {"type": "object"}
    return config


def build_body(request: Request, route: Route) -> dict[str, Any]:
    """The JSON body of ``streamGenerateContent`` for ``request`` sent to ``route``.
    ``Request.extra`` is merged last (``generationConfig`` key by key), so
    ``safetySettings``, ``cachedContent`` or ``responseMimeType`` pass through. A
    thinking budget that does not fit under the caller's max_tokens is fitted first
    (:func:`~modelplug_gemini.budget.fit_thinking` says what it changed)."""
    request, _ = fit_thinking(request, route)
    body: dict[str, Any] = {"contents": contents_of(request, route)}
    if request.system:
        body["systemInstruction"] = {"parts": [{"text": request.system}]}
    tools = _tools(request)
    if tools:
        body["tools"] = tools
    tool_config = _tool_config(request)
    if tool_config is not None:
        body["toolConfig"] = tool_config
    generation = _generation_config(request, route)
    for key, value in request.extra.items():
        if key == "generationConfig" and isinstance(value, Mapping):
            generation.update(value)
        else:
            body[key] = value
    if generation:
        body["generationConfig"] = generation
    return body
