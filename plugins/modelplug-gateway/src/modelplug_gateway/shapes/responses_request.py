"""An OpenAI Responses request body (``POST /v1/responses``) read into a modelplug Request.

Read: ``input`` as a string or as items (messages of every role, ``function_call``,
``function_call_output``, ``reasoning``), ``instructions``, function ``tools`` and
``tool_choice``, ``reasoning.effort``, ``text.format``, ``max_output_tokens``,
``temperature``, ``top_p``, ``stream``, ``include`` and ``store`` (accepted; the gateway
keeps nothing). System and developer messages before the conversation join the
instructions; later ones are ``Parsed.system_notes``, placed as the Messages shape's are.

Refused with a 400 naming the field: what needs a response kept between calls
(``previous_response_id``, ``conversation``, ``background``, an ``item_reference``),
files by id, and a malformed body (the field named by its path, ``input.2.call_id``).

What the neutral Request has no field for is not refused, so an agent still runs: tool
types other than ``function`` and ``web_search`` (the Codex CLI's ``namespace``,
``custom``, ``local_shell``...), a ``web_search`` with ``external_web_access: false``
(no other provider's search keeps to cached results), input items of other types (the
calls and outputs of those tools, ``tool_search_output``...), ``text.verbosity`` and
top-level fields this module does not know. Their names go into ``Parsed.unserved`` (an
upstream of another type drops them and the answer's ``x-modelplug-dropped`` header
names them) and the caller's whole field into ``Parsed.passthrough``, which an OpenAI
Responses upstream gets as it was sent (:mod:`modelplug_gateway.upstream_fit`).

Reasoning items come back as the blocks they left as (:mod:`.reasoning_items`), each
assistant turn marked with the model that wrote it, so its reasoning goes back to that
model only.
"""

from __future__ import annotations

import json
from typing import Any

# At the top, not in the functions: they run on every call (modelplug is loaded anyway).
from modelplug import Request, parse_arguments

from .anthropic_request import _validation_words as validation_words
from .base import Parsed, ShapeError
from .reasoning_items import unsealed

__all__ = ["OWN_TYPES", "parse_request"]

OWN_TYPES = frozenset({"openai-responses"})
"""The provider types that speak the Responses API: they take passthrough as sent."""

# Need a response kept between calls: the gateway keeps none.
_STATEFUL = {
    "previous_response_id": "the gateway keeps no responses: send the whole conversation "
    "in 'input' (with store: false, as the Codex CLI does)",
    "conversation": "the gateway keeps no conversations: send the whole conversation in 'input'",
}
_READ = frozenset(
    {
        "model",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "text",
        "reasoning",
        "max_output_tokens",
        "temperature",
        "top_p",
        "stream",
        "stream_options",
        "include",
        "store",
        "background",
        "top_logprobs",
        *_STATEFUL,
    }
)
# Hints that change nothing another provider does: an OpenAI Responses upstream gets
# them, another leaves them out without naming them (as the chat shape ignores them).
_QUIET = frozenset(
    {
        "parallel_tool_calls",
        "metadata",
        "user",
        "safety_identifier",
        "service_tier",
        "prompt_cache_key",
        "prompt_cache_retention",
        "truncation",
        "client_metadata",
    }
)
_EFFORTS = ("minimal", "low", "medium", "high", "xhigh", "max")
ENCRYPTED = "reasoning.encrypted_content"


def _refuse(param: str, message: str) -> ShapeError:
    return ShapeError(f"{param}: {message}", param=param)


def _obj(value: Any, param: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _refuse(param, "expected an object")
    return value


def _list(value: Any, param: str) -> list[Any]:
    if not isinstance(value, list):
        raise _refuse(param, "expected a list")
    return value


def _str(value: Any, param: str, *, empty: bool = True) -> str:
    if not isinstance(value, str):
        raise _refuse(param, "expected a string")
    if not empty and not value:
        raise _refuse(param, "must not be empty")
    return value


def _num(value: Any, param: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _refuse(param, "expected a number")
    if not low <= value <= high:
        raise _refuse(param, f"must be between {low:g} and {high:g}")
    return float(value)


def _image(part: dict[str, Any], param: str) -> dict[str, Any]:
    url = part.get("image_url")
    if url is None and part.get("file_id") is not None:
        raise _refuse(f"{param}.file_id", "files by id need stored files: send image_url")
    url = _str(url, f"{param}.image_url", empty=False)
    if url.startswith("data:"):
        head, _, data = url.partition(",")
        if not data or ";base64" not in head:
            raise _refuse(f"{param}.image_url", "a data: URL must be base64")
        return {"type": "image", "media_type": head[5:].split(";")[0] or "image/png", "data": data}
    return {"type": "image", "url": url}


class _Reader:
    """One body's input items, read into messages in order."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.messages: list[dict[str, Any]] = []
        self.system: list[str] = []  # system and developer text before the conversation
        self.notes: list[tuple[int, str]] = []  # ... and inside it
        self.unserved: list[str] = []
        self.fresh = False  # a system note came: the next block starts a new message

    # -------------------------------------------------------------- placing blocks

    def _turn(self, role: str, model: str | None = None) -> dict[str, Any]:
        last = self.messages[-1] if self.messages and not self.fresh else None
        # One message per turn, and per model that wrote it (its reasoning goes to it).
        if last is not None and last["role"] == role and model in (None, last.get("model")):
            return last
        message: dict[str, Any] = {"role": role, "content": []}
        if role == "assistant":
            message["model"] = model or self.model
        self.messages.append(message)
        self.fresh = False
        return message

    def _calls_before(self, message: dict[str, Any]) -> set[str]:
        at = self.messages.index(message)
        if at == 0 or self.messages[at - 1]["role"] != "assistant":
            return set()
        return {b["id"] for b in self.messages[at - 1]["content"] if b["type"] == "tool_use"}

    def _result(self, block: dict[str, Any], text: str) -> None:
        """A call's output goes right after the turn that made the call; one answering
        no call there (a call of a dropped tool type) is kept as text."""
        last = self.messages[-1] if self.messages and not self.fresh else None
        call_id = block["tool_use_id"]
        role = last["role"] if last is not None else None
        if role == "user" and last is not None and call_id in self._calls_before(last):
            results = sum(1 for b in last["content"] if b["type"] == "tool_result")
            last["content"].insert(results, block)  # results first, then text
            return
        if role == "assistant" and last is not None and _makes_call(last, call_id):
            self._turn("user")["content"].append(block)
            return
        self._turn("user")["content"].append(
            {"type": "text", "text": f"[output of tool call {call_id}]\n{text}"}
        )

    # -------------------------------------------------------------- items

    def item(self, item: Any, param: str) -> None:
        item = _obj(item, param)
        kind = item.get("type")
        if kind is None and "role" in item:
            kind = "message"
        if kind == "message":
            self.message(item, param)
        elif kind == "function_call":
            self.function_call(item, param)
        elif kind == "function_call_output":
            self.function_call_output(item, param)
        elif kind == "reasoning":
            self.reasoning(item, param)
        elif kind == "item_reference":
            raise _refuse(param, "item references need stored responses: send the item itself")
        elif isinstance(kind, str) and kind:
            self.unserved.append(f"input.{kind}")
        else:
            raise _refuse(f"{param}.type", "expected an item type")

    def message(self, item: dict[str, Any], param: str) -> None:
        role = item.get("role")
        content = item.get("content")
        if role in ("system", "developer"):
            text = self._text_of(content, f"{param}.content")
            if not text:
                return
            if self.messages:
                self.notes.append((len(self.messages), text))
                self.fresh = True
            else:
                self.system.append(text)
            return
        if role not in ("user", "assistant"):
            raise _refuse(f"{param}.role", "expected user, assistant, system or developer")
        if isinstance(content, str):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": content}]
        else:
            blocks = [
                self.part(p, f"{param}.content.{i}", role)
                for i, p in enumerate(_list(content, f"{param}.content"))
            ]
        self._turn(role)["content"].extend(blocks)

    def part(self, part: Any, param: str, role: str) -> dict[str, Any]:
        part = _obj(part, param)
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            return {"type": "text", "text": _str(part.get("text"), f"{param}.text")}
        if kind == "refusal":
            return {"type": "text", "text": _str(part.get("refusal"), f"{param}.refusal")}
        if kind == "input_image" and role == "user":
            return _image(part, param)
        if kind == "input_file":
            raise _refuse(f"{param}.type", "input_file is not supported: send the file's text")
        raise _refuse(f"{param}.type", f"content parts of type {kind!r} are not supported here")

    def _text_of(self, content: Any, param: str) -> str:
        if isinstance(content, str):
            return content
        texts = []
        for i, part in enumerate(_list(content, param)):
            block = self.part(part, f"{param}.{i}", "system")
            if block["type"] != "text":
                raise _refuse(f"{param}.{i}.type", "a system message takes text only")
            texts.append(block["text"])
        return "\n\n".join(t for t in texts if t)

    def function_call(self, item: dict[str, Any], param: str) -> None:
        call_id = _str(item.get("call_id"), f"{param}.call_id", empty=False)
        name = _str(item.get("name"), f"{param}.name", empty=False)
        raw = item.get("arguments", "")
        if isinstance(raw, dict):
            arguments: dict[str, Any] | str = raw
        else:
            arguments, _ = parse_arguments(_str(raw, f"{param}.arguments"))
        block = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
        self._turn("assistant")["content"].append(block)

    def function_call_output(self, item: dict[str, Any], param: str) -> None:
        call_id = _str(item.get("call_id"), f"{param}.call_id", empty=False)
        output = item.get("output")
        parts: list[dict[str, Any]] = []
        if isinstance(output, str):
            parts.append({"type": "text", "text": output})
        else:
            for i, part in enumerate(_list(output, f"{param}.output")):
                parts.append(self.part(part, f"{param}.output.{i}", "user"))
        text = "".join(p["text"] for p in parts if p["type"] == "text")
        self._result({"type": "tool_result", "tool_use_id": call_id, "content": parts}, text)

    def reasoning(self, item: dict[str, Any], param: str) -> None:
        summary = item.get("summary", [])
        for i, part in enumerate(_list(summary, f"{param}.summary")):
            _str(_obj(part, f"{param}.summary.{i}").get("text"), f"{param}.summary.{i}.text")
        if item.get("encrypted_content") is not None:
            _str(item["encrypted_content"], f"{param}.encrypted_content")
        opened = unsealed(item)
        if opened is not None:
            block, route = opened
            self._turn("assistant", route)["content"].append(block)
            return
        text = "\n\n".join(p["text"] for p in summary if p["text"])
        wire = {k: v for k, v in item.items() if v is not None}
        self._turn("assistant")["content"].append({"type": "thinking", "text": text, "wire": wire})


def _makes_call(message: dict[str, Any], call_id: str) -> bool:
    return any(b["type"] == "tool_use" and b["id"] == call_id for b in message["content"])


def _tools(value: Any, unserved: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    tools: list[dict[str, Any]] = []
    server: list[dict[str, Any]] = []
    for i, tool in enumerate(_list(value, "tools")):
        where = f"tools.{i}"
        tool = _obj(tool, where)
        kind = _str(tool.get("type"), f"{where}.type", empty=False)
        if kind == "function":
            spec: dict[str, Any] = {
                "name": _str(tool.get("name"), f"{where}.name", empty=False),
                "description": _str(tool.get("description") or "", f"{where}.description"),
            }
            if tool.get("parameters") is not None:
                spec["input_schema"] = _obj(tool["parameters"], f"{where}.parameters")
            tools.append(spec)
        elif kind.startswith("web_search") and tool.get("external_web_access") is False:
            # Cached results only (the Codex CLI's default): the other providers' searches
            # fetch the live web, which the caller turned off, so only a Responses
            # upstream, which is sent the tool as it came, runs this one.
            unserved.append("tools.web_search")
        elif kind.startswith("web_search"):
            entry: dict[str, Any] = {"type": "web_search"}
            filters = tool.get("filters")
            if filters is not None:
                domains = _obj(filters, f"{where}.filters").get("allowed_domains")
                if domains is not None:
                    entry["allowed_domains"] = [
                        _str(d, f"{where}.filters.allowed_domains.{j}")
                        for j, d in enumerate(_list(domains, f"{where}.filters.allowed_domains"))
                    ]
            server.append(entry)
        else:
            unserved.append(f"tools.{kind}")
    return tools, server


def _tool_choice(value: Any) -> str:
    if value in ("auto", "none"):
        return str(value)
    if value == "required":
        return "any"
    if isinstance(value, dict) and value.get("type") == "function":
        return _str(value.get("name"), "tool_choice.name", empty=False)
    raise _refuse("tool_choice", "expected auto, none, required or a function by name")


def _text_format(value: Any, fields: dict[str, Any], passthrough: dict[str, Any]) -> list[str]:
    text = _obj(value, "text")
    unserved = [f"text.{key}" for key in text if key != "format" and text[key] is not None]
    if unserved:
        passthrough["text"] = text
    form = text.get("format")
    if form is None:
        return unserved
    form = _obj(form, "text.format")
    kind = form.get("type")
    if kind == "json_schema":
        fields["output_schema"] = {
            "name": _str(form.get("name") or "output", "text.format.name"),
            "json_schema": _obj(form.get("schema"), "text.format.schema"),
            "strict": bool(form.get("strict", True)),
        }
    elif kind == "json_object":
        fields["output_schema"] = {"json_schema": {"type": "object"}, "strict": False}
    elif kind != "text":
        raise _refuse("text.format.type", "expected text, json_schema or json_object")
    return unserved


def _reasoning(value: Any) -> dict[str, Any] | None:
    config = _obj(value, "reasoning")
    effort = config.get("effort")
    if effort is None:
        return None
    if effort == "none":
        return {"enabled": False}
    if effort not in _EFFORTS:
        raise _refuse("reasoning.effort", f"expected one of none, {', '.join(_EFFORTS)}")
    return {"effort": effort}


def _include(value: Any) -> list[str]:
    return [_str(v, f"include.{i}") for i, v in enumerate(_list(value, "include"))]


def parse_request(body: Any) -> Parsed:
    """Read a Responses API body; raise :class:`ShapeError` for anything it refuses."""
    body = _obj(body, "body")
    for name, why in _STATEFUL.items():
        if body.get(name) is not None:
            raise ShapeError(f"{name}: {why}", param=name)
    if body.get("background"):
        raise _refuse("background", "background responses need stored responses: stream instead")
    model = _str(body.get("model"), "model", empty=False)
    passthrough = {k: v for k, v in body.items() if k not in _READ and v is not None}
    reader = _Reader(model)
    raw_input = body.get("input")
    if isinstance(raw_input, str):
        reader.messages.append({"role": "user", "content": [{"type": "text", "text": raw_input}]})
    else:
        for i, item in enumerate(_list(raw_input, "input")):
            reader.item(item, f"input.{i}")
    if not reader.messages:
        raise _refuse("input", "at least one user or assistant item is required")
    fields: dict[str, Any] = {"messages": reader.messages}
    instructions = body.get("instructions")
    texts = [_str(instructions, "instructions")] if instructions is not None else []
    system = "\n\n".join(t for t in [*texts, *reader.system] if t)
    if system:
        fields["system"] = system
    unserved = reader.unserved
    if reader.unserved:
        # As sent, less the reasoning of other providers' models (none was a Responses
        # upstream's: those leave as they came), which such an upstream would refuse.
        passthrough["input"] = [i for i in raw_input if unsealed(i) is None]
    if body.get("tools") is not None:
        fields["tools"], fields["server_tools"] = _tools(body["tools"], unserved)
        if any(_obj(t, "tools").get("type") != "function" for t in body["tools"]):
            passthrough["tools"] = body["tools"]  # as sent: for a Responses upstream
    if body.get("tool_choice") is not None:
        fields["tool_choice"] = _tool_choice(body["tool_choice"])
    if body.get("text") is not None:
        unserved += _text_format(body["text"], fields, passthrough)
    if body.get("reasoning") is not None:
        thinking = _reasoning(body["reasoning"])
        if thinking is not None:
            fields["thinking"] = thinking
    if body.get("max_output_tokens") is not None:
        tokens = body["max_output_tokens"]
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
            raise _refuse("max_output_tokens", "expected an integer of at least 1")
        fields["max_tokens"] = tokens
    if body.get("temperature") is not None:
        fields["temperature"] = _num(body["temperature"], "temperature", 0.0, 2.0)
    if body.get("top_p") is not None:
        fields["top_p"] = _num(body["top_p"], "top_p", 0.0, 1.0)
        if fields["top_p"] == 0:
            raise _refuse("top_p", "must be greater than 0")
    include = _include(body["include"]) if body.get("include") is not None else []
    for name in ("stream", "store"):
        if body.get(name) is not None and not isinstance(body[name], bool):
            raise _refuse(name, "expected a boolean")
    if body.get("stream_options") is not None:
        _obj(body["stream_options"], "stream_options")
    logprobs = body.get("top_logprobs")
    if logprobs not in (None, 0):
        passthrough["top_logprobs"] = logprobs
    try:
        request = Request.model_validate(fields)
    except ValueError as error:
        raise ShapeError(validation_words(error)) from None
    echo = {
        "instructions": instructions,
        "tools": body.get("tools") or [],
        "tool_choice": body.get("tool_choice") or "auto",
        "text": body.get("text") or {"format": {"type": "text"}},
        "reasoning": body.get("reasoning"),
        "max_output_tokens": body.get("max_output_tokens"),
        "temperature": body.get("temperature"),
        "top_p": body.get("top_p"),
        "metadata": body.get("metadata") or {},
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "store": body.get("store", False) is True,
        "encrypted": ENCRYPTED in include,
    }
    named = {*unserved, *(k for k in passthrough if k not in _QUIET)}
    return Parsed(
        model=model,
        request=request,
        stream=body.get("stream") is True,
        passthrough=passthrough,
        system_notes=tuple(reader.notes),
        own_types=OWN_TYPES,
        unserved=tuple(sorted(named - {"input", "tools", "text"})),
        name_all_drops=True,
        echo=echo,
    )


def arguments_json(value: dict[str, Any] | str) -> str:
    """A call's arguments as the JSON text the Responses API carries."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
