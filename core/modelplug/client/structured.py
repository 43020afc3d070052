"""Structured output: ask for a JSON Schema (or a pydantic model), get a validated value.

Core runs it for every provider, in one of three modes, chosen from the route's
``ModelInfo.structured_output`` (which catalogs, probes and the user's settings fill):

- **native**: the provider constrains decoding to the schema; the request goes to the
  provider plugin with ``Request.output_schema`` set, and the plugin maps it to its API.
- **tool**: a single forced tool whose input is the object; core adds the tool and
  forces it, and the provider sees an ordinary tool call.
- **prompt**: the schema in the system prompt, for servers that have neither.

With no word about the model, core uses tool mode where the model has tools, else prompt
mode. After the answer, the JSON is read (a syntax slip such as a trailing comma is
repaired and the repair recorded; a reply cut at max_tokens is a truncation, never
repaired into an object) and validated; a failure re-asks the model with the errors as
often as ``Request.output_retries`` says, counting every attempt's usage. The final
Response carries ``parsed``, its text is the JSON, and ``metadata["structured_output"]``
says the mode, the attempts and any repairs. A server that ignores a schema sent
natively answers plain text: that error names the mode to set for the model instead.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from modelplug.contract.errors import OutputTruncatedError, OutputValidationError, RequestError
from modelplug.contract.loose_json import repair_loose_json
from modelplug.contract.types import (
    Done,
    Event,
    Message,
    Notice,
    OpaqueBlock,
    OutputSchema,
    Request,
    Response,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)

if TYPE_CHECKING:
    from modelplug.client.surface import ClientSurface
    from modelplug.contract.routes import Route, StructuredMode

__all__ = ["check_schema", "mode_for", "prepare", "read_answer", "structured_stream"]

PROMPT = (
    "Answer with one JSON value and nothing else (no prose, no code fences). It must "
    "satisfy this JSON Schema:\n{schema}"
)
WRAPPED = "value"  # the property that carries a non-object answer in tool mode
NOT_JSON = "not a JSON value"


def check_schema(schema: OutputSchema) -> None:
    """Refuse a schema that is not valid JSON Schema, before any network call."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema.json_schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(top)"
        raise RequestError(
            f"output_schema is not a valid JSON Schema at {where}: {exc.message}"
        ) from None


def mode_for(route: Route) -> StructuredMode:
    """The mode for a route: what its info says, else tool mode where it has tools."""
    mode = route.info.structured_output
    if mode in ("native", "tool", "prompt"):
        return mode
    return "tool" if route.info.supports_tools else "prompt"


def _is_object_schema(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "object"


def prepare(request: Request, schema: OutputSchema, mode: StructuredMode) -> Request:
    """The request the provider sees in ``mode``."""
    if mode == "native":
        return request.model_copy(update={"output_schema": schema})
    if mode == "tool":
        parameters = schema.json_schema
        if not _is_object_schema(parameters):
            parameters = {
                "type": "object",
                "properties": {WRAPPED: parameters},
                "required": [WRAPPED],
            }
        tool = ToolSpec(
            name=schema.name,
            description="Give your answer as this tool's input.",
            input_schema=parameters,
        )
        return request.model_copy(
            update={
                "tools": [*request.tools, tool],
                "tool_choice": schema.name,
                "output_schema": None,
            }
        )
    instructions = PROMPT.format(schema=json.dumps(schema.json_schema, ensure_ascii=False))
    system = f"{request.system}\n\n{instructions}" if request.system else instructions
    return request.model_copy(update={"system": system, "output_schema": None})


def _raw_answer(response: Response, schema: OutputSchema, mode: StructuredMode) -> Any:
    """The answer as the model gave it: a parsed tool input, or text to parse."""
    if mode == "tool":
        for block in response.message.content:
            if isinstance(block, ToolUseBlock) and block.name == schema.name:
                value = block.input
                if isinstance(value, dict) and not _is_object_schema(schema.json_schema):
                    return value.get(WRAPPED)
                return value
        return response.text
    return response.text


def _strip_fences(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```"):
        body = stripped[3:-3]
        first, _, rest = body.partition("\n")
        return (rest if first.strip().isalpha() or not first.strip() else body).strip()
    return stripped


def read_answer(
    response: Response, schema: OutputSchema, mode: StructuredMode
) -> tuple[Any, str, list[str]]:
    """(the validated value, the JSON text, the repairs applied).

    :raises OutputTruncatedError: the reply was cut at max_tokens inside the JSON.
    :raises OutputValidationError: the reply is not JSON or does not fit the schema.
    """
    raw = _raw_answer(response, schema, mode)
    repairs: list[str] = []
    if isinstance(raw, str):
        text = _strip_fences(raw)
        try:
            value = json.loads(text)
        except ValueError:
            if response.stop_reason == "max_tokens":
                raise OutputTruncatedError(raw, response) from None
            repaired, repairs = repair_loose_json(text)
            if repaired is None:
                raise OutputValidationError(
                    "the answer is not JSON",
                    raw=raw,
                    errors=[NOT_JSON],
                    response=response,
                ) from None
            value = repaired
    else:
        value = raw
    # A provider's strict mode may have made optional properties required-and-nullable
    # (schema_translate.openai_strict): a null there means "left out".
    value = undo_strict(value, schema.json_schema)
    text = json.dumps(value, ensure_ascii=False)
    return _validated(value, schema, text, response), text, repairs


def _validated(value: Any, schema: OutputSchema, raw: str, response: Response) -> Any:
    if schema.model is not None:
        from pydantic import ValidationError

        try:
            return schema.model.model_validate(value)
        except ValidationError as exc:
            errors = [
                f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors()
            ]
            raise OutputValidationError(
                "the answer does not fit the schema", raw=raw, errors=errors, response=response
            ) from None
    from jsonschema import Draft202012Validator

    problems = sorted(Draft202012Validator(schema.json_schema).iter_errors(value), key=str)
    if problems:
        errors = [
            f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}" for e in problems
        ]
        raise OutputValidationError(
            "the answer does not fit the schema", raw=raw, errors=errors, response=response
        )
    return value


def _native_ignored(client: ClientSurface, route: Route) -> str:
    """What to do when a server sent the schema natively answered no JSON at all: it
    ignores the schema, so another mode is the fix, set for that model."""
    name = route.name
    where = f'under [models."{name}"] in {client.settings.user_path or "your settings file"}'
    said = (
        f'{name} ignored the schema sent in structured_output = "native" mode (its answer '
        "is plain text)"
    )
    if route.info.supports_tools is False:
        # Tool mode needs tool calls, which this model cannot make.
        return f'{said}: set structured_output = "prompt" {where}'
    return (
        f'{said}: set structured_output = "tool" {where} (or "prompt" for a model that '
        "cannot call tools)"
    )


def _added(first: Usage, second: Usage) -> Usage:
    return Usage(
        input=first.input + second.input,
        output=first.output + second.output,
        cache_read=first.cache_read + second.cache_read,
        cache_write=first.cache_write + second.cache_write,
        reasoning=first.reasoning + second.reasoning,
        web_searches=first.web_searches + second.web_searches,
        reported=first.reported and second.reported,
    )


def _reask(request: Request, response: Response, error: OutputValidationError) -> Request:
    """The conversation so far, the answer that failed, and what was wrong with it."""
    said = "; ".join(error.errors[:20])
    correction = Message(
        role="user",
        content=[
            TextBlock(
                text=f"That answer does not fit the schema ({said}). Answer again with "
                "only the corrected JSON."
            )
        ],
    )
    answer = Message(role="assistant", content=[TextBlock(text=error.raw)], model=response.model)
    return request.model_copy(update={"messages": [*request.messages, answer, correction]})


async def structured_stream(
    client: ClientSurface, route: Route, request: Request
) -> AsyncIterator[Event]:
    """The events of a structured call: each attempt's deltas and notices, a Notice
    before each re-ask, then one Done whose Response carries ``parsed``."""
    schema = request.output_schema
    assert schema is not None
    mode = mode_for(route)
    asked = prepare(request, schema, mode)
    usage: Usage | None = None
    attempts: list[dict[str, Any]] = []
    for attempt in range(1, request.output_retries + 2):
        response: Response | None = None
        stream = client.open_stream(route, asked)
        try:
            async for event in stream:
                if isinstance(event, Done):
                    response = event.response
                    break
                yield event
        finally:
            # Closed now, on this loop, not when the garbage collector gets to it.
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        if response is None:
            return  # guarded_stream reports the stream that ended without Done
        usage = response.usage if usage is None else _added(usage, response.usage)
        attempts.append({"usage": response.usage.model_dump(), "stop_reason": response.stop_reason})
        try:
            value, text, repairs = read_answer(response, schema, mode)
        except OutputTruncatedError:
            raise
        except OutputValidationError as exc:
            exc.attempts = attempt
            if attempt > request.output_retries:
                if mode == "native" and exc.errors == [NOT_JSON]:
                    exc.add_hint(_native_ignored(client, route))
                raise
            yield Notice(
                kind="structured_retry",
                message=f"the answer did not fit the schema ({'; '.join(exc.errors[:3])}); "
                f"asking again ({attempt} of {request.output_retries})",
            )
            asked = _reask(asked, response, exc)
            continue
        if mode == "tool":
            yield TextDelta(text=text)  # in tool mode the JSON came as a call, not as text
        meta = {"mode": mode, "attempts": attempts, "repairs": repairs}
        # Thinking and vendor blocks stay (they may have to go back to the model); the
        # answer itself is the JSON, as text.
        kept = [b for b in response.message.content if isinstance(b, ThinkingBlock | OpaqueBlock)]
        message = response.message.model_copy(update={"content": [*kept, TextBlock(text=text)]})
        final = response.model_copy(
            update={
                "message": message,
                "usage": usage,
                "parsed": value,
                "stop_reason": "end_turn" if mode == "tool" else response.stop_reason,
                "metadata": {**response.metadata, "structured_output": meta},
            }
        )
        yield Done(response=final)
        return


def undo_strict(value: Any, schema: dict[str, Any]) -> Any:
    """An answer to :func:`openai_strict`'s schema as an answer to the original: a
    ``null`` for a property that was optional (and did not allow null) is left out."""
    definitions = {**schema.get("definitions", {}), **schema.get("$defs", {})}

    def walk(node: Any, sub: Any) -> Any:
        if not isinstance(sub, dict):
            return node
        ref = sub.get("$ref")
        if isinstance(ref, str) and ref.rsplit("/", 1)[-1] in definitions:
            return walk(node, definitions[ref.rsplit("/", 1)[-1]])
        if isinstance(node, dict) and ("properties" in sub or sub.get("type") == "object"):
            properties = sub.get("properties", {})
            required = set(sub.get("required", []))
            out = {}
            for key, item in node.items():
                prop = properties.get(key, {})
                if item is None and key not in required and not _allows_null(prop):
                    continue
                out[key] = walk(item, prop)
            return out
        if isinstance(node, list) and isinstance(sub.get("items"), dict):
            return [walk(item, sub["items"]) for item in node]
        for key in ("anyOf", "allOf"):
            for branch in sub.get(key, []):
                if isinstance(branch, dict) and branch.get("type") != "null":
                    return walk(node, branch)
        return node

    return walk(value, schema)


def _allows_null(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(isinstance(b, dict) and _allows_null(b) for b in node.get("anyOf", []))
