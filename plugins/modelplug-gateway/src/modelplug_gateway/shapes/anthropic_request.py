"""An Anthropic Messages request body read into a modelplug Request.

Every field is checked before anything is built, so a malformed body is a ShapeError
naming the field by its path (``messages.0.content.1.source``), the way the API words
its own 400s, and never another exception. Blocks and tools the Messages API has that
no provider could honour here (documents, computer-use tools) are refused by name rather
than dropped; ``metadata`` and ``service_tier`` are read and have no effect.

A top-level field this module does not know (a beta feature such as Claude Code's
``context_management``, or one the API adds tomorrow) is kept as sent in
``Parsed.passthrough``, and a ``role: "system"`` message inside the conversation (Claude
Code sends them, with the turn's ``output_config`` of its per-turn control beta, read as
the body's own) in ``Parsed.system_notes``: what becomes of them depends on the
upstream the model resolves to (:mod:`modelplug_gateway.upstream_fit`).

Thinking and redacted thinking blocks the client sends back keep the block exactly as
it came (``wire``), and the assistant message is marked with the model the caller
named, so the replay rule (:mod:`modelplug.contract.replay`) sends them back byte for byte to
that model and to no other.
"""

from __future__ import annotations

from typing import Any

from .base import Parsed, ShapeError

__all__ = ["parse_request"]

_FIELDS = frozenset(
    {
        "model",
        "max_tokens",
        "system",
        "messages",
        "tools",
        "tool_choice",
        "temperature",
        "top_p",
        "top_k",
        "stop_sequences",
        "thinking",
        "metadata",
        "stream",
        "service_tier",
        "output_config",
    }
)
_SERVER_TOOLS = ("web_search_20250305", "web_search_20260209")
# Assistant-only vendor blocks kept whole for a replay to the model that made them.
_REPLAY_KINDS = ("server_tool_use", "web_search_tool_result")
_EFFORTS = ("low", "medium", "high", "xhigh", "max")


def _refuse(param: str, message: str) -> ShapeError:
    return ShapeError(f"{param}: {message}", param=param)


def _extra(body: dict[str, Any], allowed: frozenset[str] | tuple[str, ...], where: str) -> None:
    for key, value in body.items():
        # Inside the body a null is a field left out: the SDKs dump their response
        # models with every optional field (``caller``, ``citations``) as null.
        if key not in allowed and (value is not None or not where):
            path = f"{where}.{key}" if where else key
            raise _refuse(path, "Extra inputs are not permitted")


def _obj(value: Any, param: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _refuse(param, "Input should be an object")
    return value


def _str(value: Any, param: str, *, empty: bool = True) -> str:
    if not isinstance(value, str):
        raise _refuse(param, "Input should be a string")
    if not empty and not value:
        raise _refuse(param, "String should not be empty")
    return value


def _int(value: Any, param: str, *, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _refuse(param, "Input should be an integer")
    if value < low:
        raise _refuse(param, f"Input should be greater than or equal to {low}")
    return value


def _num(value: Any, param: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _refuse(param, "Input should be a number")
    if not low <= value <= high:
        raise _refuse(param, f"Input should be between {low:g} and {high:g}")
    return float(value)


def _list(value: Any, param: str) -> list[Any]:
    if not isinstance(value, list):
        raise _refuse(param, "Input should be a list")
    return value


class _Reader:
    """One body's reading; ``cache`` records whether any cache_control was asked for."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.cache = False
        self.notes: list[tuple[int, str]] = []  # system messages inside the conversation
        # The last system message's output_config (Claude Code's per-turn control beta
        # sends the turn's effort there): it outranks the body's, being the later word.
        self.turn_config: tuple[Any, str] | None = None

    def _cache_mark(self, block: dict[str, Any], param: str) -> None:
        mark = block.get("cache_control")
        if mark is not None:
            _obj(mark, f"{param}.cache_control")
            self.cache = True

    def image(self, block: dict[str, Any], param: str) -> dict[str, Any]:
        _extra(block, ("type", "source", "cache_control"), param)
        self._cache_mark(block, param)
        source = _obj(block.get("source"), f"{param}.source")
        kind = source.get("type")
        where = f"{param}.source"
        if kind == "base64":
            _extra(source, ("type", "media_type", "data"), where)
            return {
                "type": "image",
                "media_type": _str(source.get("media_type"), f"{where}.media_type", empty=False),
                "data": _str(source.get("data"), f"{where}.data", empty=False),
            }
        if kind == "url":
            _extra(source, ("type", "url"), where)
            return {"type": "image", "url": _str(source.get("url"), f"{where}.url", empty=False)}
        raise _refuse(f"{where}.type", "Input should be 'base64' or 'url'")

    def text(self, block: dict[str, Any], param: str) -> dict[str, Any]:
        _extra(block, ("type", "text", "cache_control", "citations"), param)
        self._cache_mark(block, param)
        out: dict[str, Any] = {"type": "text", "text": _str(block.get("text"), f"{param}.text")}
        citations = block.get("citations")
        if citations is not None:
            for i, item in enumerate(_list(citations, f"{param}.citations")):
                _obj(item, f"{param}.citations.{i}")
            out["citations"] = citations or None
        return out

    def tool_result(self, block: dict[str, Any], param: str) -> dict[str, Any]:
        _extra(block, ("type", "tool_use_id", "content", "is_error", "cache_control"), param)
        self._cache_mark(block, param)
        content = block.get("content", [])
        parts: list[dict[str, Any]] = []
        if isinstance(content, str):
            parts.append({"type": "text", "text": content})
        else:
            for i, part in enumerate(_list(content, f"{param}.content")):
                where = f"{param}.content.{i}"
                part = _obj(part, where)
                if part.get("type") == "text":
                    parts.append(self.text(part, where))
                elif part.get("type") == "image":
                    parts.append(self.image(part, where))
                else:
                    raise _refuse(f"{where}.type", "Input should be 'text' or 'image'")
        for part in parts:
            part.pop("citations", None)
        is_error = block.get("is_error", False)
        if not isinstance(is_error, bool):
            raise _refuse(f"{param}.is_error", "Input should be a boolean")
        return {
            "type": "tool_result",
            "tool_use_id": _str(block.get("tool_use_id"), f"{param}.tool_use_id", empty=False),
            "content": parts,
            "is_error": is_error,
        }

    def block(self, block: Any, param: str, role: str) -> dict[str, Any]:
        block = _obj(block, param)
        kind = block.get("type")
        if kind == "text":
            return self.text(block, param)
        if kind == "image":
            return self.image(block, param)
        if kind == "tool_result":
            if role != "user":
                raise _refuse(param, "tool_result blocks belong in a user message")
            return self.tool_result(block, param)
        if role != "assistant" and kind in ("tool_use", "thinking", "redacted_thinking"):
            raise _refuse(param, f"{kind} blocks belong in an assistant message")
        if kind == "tool_use":
            # ``caller``: who made the call (programmatic tool calling); no neutral home.
            _extra(block, ("type", "id", "name", "input", "cache_control", "caller"), param)
            self._cache_mark(block, param)
            return {
                "type": "tool_use",
                "id": _str(block.get("id"), f"{param}.id", empty=False),
                "name": _str(block.get("name"), f"{param}.name", empty=False),
                "input": _obj(block.get("input"), f"{param}.input"),
            }
        if kind == "thinking":
            _extra(block, ("type", "thinking", "signature"), param)
            return {
                "type": "thinking",
                "text": _str(block.get("thinking"), f"{param}.thinking"),
                "signature": _str(block.get("signature"), f"{param}.signature") or None,
                # The block exactly as the client sent it: what goes back to the model.
                "wire": dict(block),
            }
        if kind == "redacted_thinking":
            _extra(block, ("type", "data"), param)
            _str(block.get("data"), f"{param}.data", empty=False)
            return {"type": "opaque", "kind": kind, "wire": dict(block)}
        if kind in _REPLAY_KINDS and role == "assistant":
            return {"type": "opaque", "kind": kind, "wire": dict(block)}
        if isinstance(kind, str):
            raise _refuse(f"{param}.type", f"content blocks of type {kind!r} are not supported")
        raise _refuse(f"{param}.type", "Field required")

    def messages(self, value: Any) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        items = _list(value, "messages")
        if not items:
            raise _refuse("messages", "at least one message is required")
        for i, message in enumerate(items):
            where = f"messages.{i}"
            message = _obj(message, where)
            role = message.get("role")
            allowed = (
                ("role", "content", "output_config") if role == "system" else ("role", "content")
            )
            _extra(message, allowed, where)
            if role == "system":
                if message.get("output_config") is not None:
                    self.turn_config = (message["output_config"], f"{where}.output_config")
                text = self.system(message.get("content"), f"{where}.content")
                if text:
                    self.notes.append((len(out), text))
                continue
            if role not in ("user", "assistant"):
                raise _refuse(f"{where}.role", "Input should be 'user', 'assistant' or 'system'")
            content = message.get("content")
            if isinstance(content, str):
                blocks = [{"type": "text", "text": content}]
            else:
                blocks = [
                    self.block(b, f"{where}.content.{j}", role)
                    for j, b in enumerate(_list(content, f"{where}.content"))
                ]
            entry: dict[str, Any] = {"role": role, "content": blocks}
            if role == "assistant":
                entry["model"] = self.model
            out.append(entry)
        return out

    def system(self, value: Any, param: str = "system") -> str | None:
        if isinstance(value, str):
            return value or None
        texts = []
        for i, block in enumerate(_list(value, param)):
            where = f"{param}.{i}"
            block = _obj(block, where)
            if block.get("type") != "text":
                raise _refuse(f"{where}.type", "Input should be 'text'")
            texts.append(self.text(block, where)["text"])
        return "\n\n".join(t for t in texts if t) or None

    def tools(self, value: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        tools: list[dict[str, Any]] = []
        server: list[dict[str, Any]] = []
        for i, tool in enumerate(_list(value, "tools")):
            where = f"tools.{i}"
            tool = _obj(tool, where)
            kind = tool.get("type", "custom")
            self._cache_mark(tool, where)
            if kind in _SERVER_TOOLS:
                _extra(
                    tool,
                    (
                        "type",
                        "name",
                        "max_uses",
                        "allowed_domains",
                        "blocked_domains",
                        "cache_control",
                        "user_location",
                    ),
                    where,
                )
                entry: dict[str, Any] = {"type": "web_search"}
                if tool.get("max_uses") is not None:
                    entry["max_uses"] = _int(tool["max_uses"], f"{where}.max_uses", low=1)
                for name in ("allowed_domains", "blocked_domains"):
                    if tool.get(name) is not None:
                        domains = _list(tool[name], f"{where}.{name}")
                        entry[name] = [
                            _str(d, f"{where}.{name}.{j}") for j, d in enumerate(domains)
                        ]
                server.append(entry)
                continue
            if kind != "custom":
                raise _refuse(f"{where}.type", f"tools of type {kind!r} are not supported")
            # defer_loading (the tool search beta: the definition is loaded when searched
            # for) is a hint the gateway need not act on: the tool is always offered.
            _extra(
                tool,
                ("type", "name", "description", "input_schema", "cache_control", "defer_loading"),
                where,
            )
            tools.append(
                {
                    "name": _str(tool.get("name"), f"{where}.name", empty=False),
                    "description": _str(tool.get("description", ""), f"{where}.description"),
                    "input_schema": _obj(tool.get("input_schema"), f"{where}.input_schema"),
                }
            )
        return tools, server


def _tool_choice(value: Any) -> str:
    choice = _obj(value, "tool_choice")
    kind = choice.get("type")
    if kind in ("auto", "any", "none"):
        _extra(choice, ("type", "disable_parallel_tool_use"), "tool_choice")
        return str(kind)
    if kind == "tool":
        _extra(choice, ("type", "name", "disable_parallel_tool_use"), "tool_choice")
        return _str(choice.get("name"), "tool_choice.name", empty=False)
    raise _refuse("tool_choice.type", "Input should be 'auto', 'any', 'tool' or 'none'")


def _thinking(value: Any) -> dict[str, Any]:
    config = _obj(value, "thinking")
    kind = config.get("type")
    out: dict[str, Any] = {}
    if kind == "enabled":
        _extra(config, ("type", "budget_tokens", "display"), "thinking")
        out["budget_tokens"] = _int(config.get("budget_tokens"), "thinking.budget_tokens", low=1)
    elif kind == "adaptive":
        _extra(config, ("type", "display"), "thinking")
        out["adaptive"] = True
    elif kind == "disabled":
        _extra(config, ("type",), "thinking")
        return {"enabled": False}
    else:
        raise _refuse("thinking.type", "Input should be 'enabled', 'adaptive' or 'disabled'")
    display = config.get("display")
    if display is not None:
        if display not in ("summarized", "omitted"):
            raise _refuse("thinking.display", "Input should be 'summarized' or 'omitted'")
        out["display"] = display
    return out


def _output_config(value: Any, fields: dict[str, Any], where: str = "output_config") -> None:
    config = _obj(value, where)
    _extra(config, ("effort", "format"), where)
    effort = config.get("effort")
    if effort is not None:
        if effort not in _EFFORTS:
            raise _refuse(f"{where}.effort", f"Input should be one of {', '.join(_EFFORTS)}")
        fields["thinking"] = {**fields.get("thinking", {}), "effort": effort}
    form = config.get("format")
    if form is not None:
        form = _obj(form, f"{where}.format")
        _extra(form, ("type", "schema"), f"{where}.format")
        if form.get("type") != "json_schema":
            raise _refuse(f"{where}.format.type", "Input should be 'json_schema'")
        fields["output_schema"] = {
            "json_schema": _obj(form.get("schema"), f"{where}.format.schema")
        }


def parse_request(body: Any) -> Parsed:
    """Read a Messages API body; raise :class:`ShapeError` for anything it refuses."""
    from modelplug import Request

    body = _obj(body, "body")
    # What the API may take and this module does not read: for the upstream to judge.
    passthrough = {key: value for key, value in body.items() if key not in _FIELDS}
    model = _str(body.get("model"), "model", empty=False)
    reader = _Reader(model)
    fields: dict[str, Any] = {
        "max_tokens": _int(body.get("max_tokens"), "max_tokens", low=1),
        "messages": reader.messages(body.get("messages")),
    }
    if body.get("system") is not None:
        fields["system"] = reader.system(body["system"])
    if body.get("tools") is not None:
        fields["tools"], fields["server_tools"] = reader.tools(body["tools"])
    if body.get("tool_choice") is not None:
        fields["tool_choice"] = _tool_choice(body["tool_choice"])
    if body.get("temperature") is not None:
        fields["temperature"] = _num(body["temperature"], "temperature", 0.0, 1.0)
    if body.get("top_p") is not None:
        fields["top_p"] = _num(body["top_p"], "top_p", 0.0, 1.0)
        if fields["top_p"] == 0:
            raise _refuse("top_p", "Input should be greater than 0")
    if body.get("top_k") is not None:
        fields["top_k"] = _int(body["top_k"], "top_k", low=1)
    if body.get("stop_sequences") is not None:
        stops = _list(body["stop_sequences"], "stop_sequences")
        fields["stop"] = [_str(s, f"stop_sequences.{i}", empty=False) for i, s in enumerate(stops)]
    if body.get("thinking") is not None:
        fields["thinking"] = _thinking(body["thinking"])
    if body.get("output_config") is not None:
        _output_config(body["output_config"], fields)
    if reader.turn_config is not None:
        config, where = reader.turn_config
        _output_config(config, fields, where)
    if body.get("metadata") is not None:
        metadata = _obj(body["metadata"], "metadata")
        _extra(metadata, ("user_id",), "metadata")
        if metadata.get("user_id") is not None:
            _str(metadata["user_id"], "metadata.user_id")
    if body.get("service_tier") is not None:
        _str(body["service_tier"], "service_tier")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise _refuse("stream", "Input should be a boolean")
    if reader.cache:
        fields["cache"] = True
    try:
        request = Request.model_validate(fields)
    except ValueError as error:
        # The conversation's own rules (a tool_result answering no tool_use, tool
        # names repeated, tool_choice naming no tool): pydantic's words, one line each.
        raise ShapeError(_validation_words(error)) from None
    return Parsed(
        model=model,
        request=request,
        stream=stream,
        passthrough=passthrough,
        system_notes=tuple(reader.notes),
    )


def _validation_words(error: ValueError) -> str:
    errors = getattr(error, "errors", None)
    if errors is None:
        return str(error)
    lines = []
    for item in errors(include_url=False, include_input=False):
        where = ".".join(str(p) for p in item.get("loc", ()))
        message = str(item.get("msg", "invalid")).removeprefix("Value error, ")
        lines.append(f"{where}: {message}" if where else message)
    return "; ".join(lines) or "invalid request"
