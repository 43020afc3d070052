"""OpenAI Chat Completions: ``POST /v1/chat/completions`` bodies, answers and chunks.

Messages are read by core's own OpenAI reader (the same one ``modelplug.as_request`` uses),
so a conversation means the same thing through the gateway as in a library call."""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from modelplug import ModelplugError  # here, not per call (loaded with the plugin)

from ..call_timings import timings_field
from ..errors import failure_for, openai_code
from .base import Parsed, ShapeError

if TYPE_CHECKING:
    from modelplug import Event, Response, Usage

__all__ = ["SHAPE", "OpenAIChat"]

FINISH = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
    "pause_turn": "stop",
    # Core's repetition guard cut a loop: what a proxy that cuts one sends (the seed's).
    "repetition": "content_filter",
    "other": "stop",
}

# Fields the SDK may send that change nothing a provider does here.
_IGNORED = frozenset(
    {"user", "metadata", "store", "parallel_tool_calls", "service_tier", "prompt_cache_key"}
)
_READ = frozenset(
    {
        "model",
        "messages",
        "stream",
        "stream_options",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "stop",
        "seed",
        "tools",
        "tool_choice",
        "response_format",
        "reasoning_effort",
        "n",
        "frequency_penalty",
        "presence_penalty",
        "logprobs",
    }
)
_EFFORTS = ("minimal", "low", "medium", "high", "max")


def _completion_id() -> str:
    return "chatcmpl-" + os.urandom(12).hex()


class OpenAIChat:
    name = "openai"

    # ---------------------------------------------------------------- request

    def parse(self, body: dict[str, Any]) -> Parsed:
        from modelplug import as_request

        unknown = [k for k in body if k not in _READ and k not in _IGNORED]
        if unknown:
            raise ShapeError(
                f"unknown field(s): {', '.join(sorted(unknown))}", param=sorted(unknown)[0]
            )
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise ShapeError("'model' must be a non-empty string", param="model")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ShapeError("'messages' must be a non-empty list", param="messages")
        if body.get("n") not in (None, 1):
            raise ShapeError("only n = 1 is supported", param="n")
        if body.get("logprobs"):
            raise ShapeError("logprobs are not supported", param="logprobs")
        for name in ("frequency_penalty", "presence_penalty"):
            if body.get(name) not in (None, 0, 0.0):
                raise ShapeError(f"{name} is not supported by every provider", param=name)
        fields: dict[str, Any] = {"messages": messages}
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        if max_tokens is not None:
            fields["max_tokens"] = max_tokens
        for name in ("temperature", "top_p", "seed"):
            if body.get(name) is not None:
                fields[name] = body[name]
        stop = body.get("stop")
        if stop is not None:
            fields["stop"] = [stop] if isinstance(stop, str) else stop
        if body.get("tools"):
            fields["tools"] = _tools(body["tools"])
        if body.get("tool_choice") is not None:
            fields["tool_choice"] = _tool_choice(body["tool_choice"])
        schema = _output_schema(body.get("response_format"))
        if schema is not None:
            fields["output_schema"] = schema
        effort = body.get("reasoning_effort")
        if effort is not None:
            if effort not in _EFFORTS and effort != "none":
                raise ShapeError(
                    f"reasoning_effort must be one of {', '.join(_EFFORTS)} or none",
                    param="reasoning_effort",
                )
            fields["thinking"] = {"enabled": False} if effort == "none" else {"effort": effort}
        try:
            request = as_request(fields)
        except ValueError as exc:  # pydantic's ValidationError and the message reader's
            raise ShapeError(_first_line(exc)) from None
        stream = body.get("stream") is True
        options = body.get("stream_options") or {}
        if not isinstance(options, dict):
            raise ShapeError("'stream_options' must be an object", param="stream_options")
        return Parsed(
            model=model,
            request=request,
            stream=stream,
            include_usage=bool(options.get("include_usage", False)),
        )

    # ---------------------------------------------------------------- answers

    def response(
        self, response: Response, model: str, parsed: Parsed | None = None
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": response.text or None}
        calls = response.tool_calls
        if calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": _arguments(c.input)},
                }
                for c in calls
            ]
        reasoning = _reasoning(response)
        if reasoning:
            message["reasoning_content"] = reasoning
        if response.parsed is not None and response.stop_reason == "refusal":
            message["refusal"] = response.text
        return {
            "id": _completion_id(),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": FINISH.get(response.stop_reason, "stop"),
                    "logprobs": None,
                }
            ],
            "usage": usage_body(response.usage),
            **timings_field(response),
        }

    async def stream(
        self, events: AsyncIterator[Event], model: str, parsed: Parsed
    ) -> AsyncIterator[bytes]:
        head = (
            f'{{"id":"{_completion_id()}","object":"chat.completion.chunk",'
            f'"created":{int(time.time())},"model":{json.dumps(model)},'
        ).encode()
        dumps = json.dumps

        def chunk(delta: str, finish: str = "null") -> bytes:
            tail = '"choices":[{"index":0,"delta":' + delta + ',"finish_reason":' + finish
            return b"data: " + head + (tail + "}]}\n\n").encode()

        started = False
        indexes: dict[str, int] = {}
        try:
            async for event in events:
                kind = event.type
                if not started:
                    started = True
                    yield chunk('{"role":"assistant","content":""}')
                if kind == "text_delta":
                    yield chunk('{"content":' + dumps(event.text) + "}")  # type: ignore[union-attr]
                elif kind == "thinking_delta":
                    yield chunk('{"reasoning_content":' + dumps(event.text) + "}")  # type: ignore[union-attr]
                elif kind == "tool_call_start":
                    index = indexes.setdefault(event.id, len(indexes))  # type: ignore[union-attr]
                    call = {
                        "index": index,
                        "id": event.id,  # type: ignore[union-attr]
                        "type": "function",
                        "function": {"name": event.name, "arguments": ""},  # type: ignore[union-attr]
                    }
                    yield chunk(dumps({"tool_calls": [call]}))
                elif kind == "done":
                    response = event.response  # type: ignore[union-attr]
                    calls = []
                    for c in response.tool_calls:
                        if c.id not in indexes:
                            index = indexes.setdefault(c.id, len(indexes))
                            calls.append(
                                {
                                    "index": index,
                                    "id": c.id,
                                    "type": "function",
                                    "function": {"name": c.name, "arguments": _arguments(c.input)},
                                }
                            )
                        else:
                            # The arguments are whole only at Done: sent once, complete.
                            calls.append(
                                {
                                    "index": indexes[c.id],
                                    "function": {"arguments": _arguments(c.input)},
                                }
                            )
                    if calls:
                        yield chunk(dumps({"tool_calls": calls}))
                    finish = dumps(FINISH.get(response.stop_reason, "stop"))
                    timings = timings_field(response)
                    if timings:
                        # Beside choices, as llama.cpp puts its own on its last chunk.
                        tail = '"choices":[{"index":0,"delta":{},"finish_reason":' + finish
                        tail += '}],"timings":' + dumps(timings["timings"]) + "}\n\n"
                        yield b"data: " + head + tail.encode()
                    else:
                        yield chunk("{}", finish)
                    if parsed.include_usage:
                        usage = usage_body(response.usage)
                        extra = _modelplug_fields(response)
                        if extra:
                            usage["modelplug"] = extra
                        yield (
                            b"data: "
                            + head
                            + ('"choices":[],"usage":' + dumps(usage) + "}\n\n").encode()
                        )
            yield b"data: [DONE]\n\n"
        except ModelplugError as exc:
            if not started:
                raise
            # The SDKs raise APIError for a chunk that carries "error".
            failure = failure_for(exc, self.name)
            assert failure is not None  # every ModelplugError has its answer
            body = self.error_body(failure.status, failure.type, failure.message, failure.code)
            yield b"data: " + dumps(body).encode() + b"\n\n"

    def error_body(
        self, status: int, kind: str, message: str, code: str | None = None
    ) -> dict[str, Any]:
        # OpenAI's clients read ``code`` as a string naming the cause, never a number.
        return {
            "error": {
                "message": message,
                "type": kind,
                "param": None,
                "code": code if code is not None else openai_code(kind),
            }
        }


def usage_body(usage: Usage) -> dict[str, Any]:
    prompt = usage.total_input
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output,
        "total_tokens": prompt + usage.output,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning},
    }


def _modelplug_fields(response: Response) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if response.model:
        extra["route"] = response.model
    if response.cost is not None:
        extra["cost"] = str(response.cost.amount)
    return extra


def _reasoning(response: Response) -> str:
    from modelplug import ThinkingBlock

    return "".join(b.text for b in response.message.content if isinstance(b, ThinkingBlock))


def _arguments(value: dict[str, Any] | str) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _tools(raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise ShapeError("'tools' must be a list", param="tools")
    tools = []
    for index, tool in enumerate(raw):
        if not isinstance(tool, dict) or tool.get("type") != "function":
            raise ShapeError(f"tools[{index}]: only function tools are supported", param="tools")
        function = tool.get("function")
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ShapeError(f"tools[{index}]: a function needs a name", param="tools")
        spec: dict[str, Any] = {
            "name": function["name"],
            "description": function.get("description") or "",
        }
        if function.get("parameters") is not None:
            spec["input_schema"] = function["parameters"]
        tools.append(spec)
    return tools


def _tool_choice(raw: Any) -> str:
    if raw in ("auto", "none"):
        return str(raw)
    if raw == "required":
        return "any"
    if isinstance(raw, dict) and isinstance(raw.get("function"), dict):
        name = raw["function"].get("name")
        if isinstance(name, str):
            return name
    raise ShapeError(
        "tool_choice must be auto, none, required or a function by name", param="tool_choice"
    )


def _output_schema(raw: Any) -> dict[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ShapeError("'response_format' must be an object", param="response_format")
    kind = raw.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return {"name": "output", "json_schema": {"type": "object"}, "strict": False}
    if kind == "json_schema":
        spec = raw.get("json_schema")
        if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
            raise ShapeError(
                "response_format.json_schema needs a 'schema' object", param="response_format"
            )
        return {
            "name": spec.get("name") or "output",
            "json_schema": spec["schema"],
            "strict": bool(spec.get("strict", True)),
        }
    raise ShapeError(
        "response_format.type must be text, json_object or json_schema", param="response_format"
    )


def _first_line(exc: Exception) -> str:
    from modelplug import redact

    text = str(exc)
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            text = f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
        except Exception:
            pass
    return redact(text.splitlines()[0] if text else "invalid request")


SHAPE = OpenAIChat()
