"""Pure mapping between modelplug's neutral types and the Messages API's JSON.

No SDK import: these functions take and return plain dicts (an SDK model is accepted by
:func:`from_wire_message` and dumped first), so they are cheap to test and to reuse.

- :func:`to_wire_params` builds the whole request body (model, max_tokens, system,
  messages, tools, thinking, output_config, cache breakpoints).
- :func:`to_wire_messages` maps the conversation, sending thinking and server-tool
  blocks back byte for byte to the model that produced them and leaving them out
  elsewhere (:mod:`modelplug.contract.replay`).
- :func:`to_wire_tools` maps tool specs and server tools (web search).
- :func:`from_wire_message` maps an API message back to a Response.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any

from modelplug import (
    Block,
    ImageBlock,
    Message,
    OpaqueBlock,
    Request,
    RequestError,
    Response,
    Route,
    ServerTool,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
    is_replayable,
)
from modelplug_kit import usage_from_anthropic

from .budget import fit_thinking
from .routes import same_model_names, supports_effort, thinking_mode

__all__ = [
    "BETAS",
    "CACHE_MARK",
    "DEFAULT_MAX_TOKENS",
    "THINKING_MIN_TOKENS",
    "THINKING_MIN_TOKENS_HIGH",
    "WEB_SEARCH_TOOL",
    "betas_of",
    "from_wire_message",
    "stop_reason_from_wire",
    "to_wire_messages",
    "to_wire_params",
    "to_wire_tools",
]

CACHE_MARK: dict[str, str] = {"type": "ephemeral"}
# The ``Request.extra`` key sent as the ``anthropic-beta`` header, not in the body: the
# SDK's own name for it (``client.beta.messages.create(betas=[...])``).
BETAS = "betas"
WEB_SEARCH_TOOL = "web_search_20250305"
DEFAULT_MAX_TOKENS = 8192
# Thinking counts toward max_tokens, so a thinking request needs room (seed 000): the
# max_tokens chosen when the caller gave none.
THINKING_MIN_TOKENS = 16_384
THINKING_MIN_TOKENS_HIGH = 32_000
_HIGH_EFFORTS = ("xhigh", "max")
_THINKING_TYPES = ("thinking", "redacted_thinking")
_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    # The context window filled up while writing: the answer was cut off.
    "model_context_window_exceeded": "max_tokens",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
}


# ----------------------------------------------------------------------- to the wire


def to_wire_tools(
    tools: Iterable[ToolSpec], server_tools: Iterable[ServerTool] = (), *, cache: bool = True
) -> list[dict[str, Any]]:
    """Tool definitions: the request's tools, then its server tools. With ``cache`` the
    last definition carries the cache mark, so the whole list is cached."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        entry: dict[str, Any] = {"name": tool.name, "input_schema": tool.input_schema}
        if tool.description:
            entry["description"] = tool.description
        out.append(entry)
    for server in server_tools:
        if server.type != "web_search":
            raise ValueError(f"the anthropic plugin has no server tool named {server.type!r}")
        search: dict[str, Any] = {"type": WEB_SEARCH_TOOL, "name": "web_search"}
        if server.max_uses is not None:
            search["max_uses"] = server.max_uses
        if server.allowed_domains:
            search["allowed_domains"] = list(server.allowed_domains)
        if server.blocked_domains:
            search["blocked_domains"] = list(server.blocked_domains)
        out.append(search)
    if cache and out:
        out[-1]["cache_control"] = dict(CACHE_MARK)
    return out


def _image(block: ImageBlock) -> dict[str, Any]:
    if block.url is not None:
        return {"type": "image", "source": {"type": "url", "url": block.url}}
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block.media_type, "data": block.data},
    }


def _tool_input(value: dict[str, Any] | str) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    # Broken JSON another model wrote: the API needs an object, and the raw text is
    # what the model should see again.
    try:
        parsed = json.loads(value)
    except ValueError:
        return {"_raw_arguments": value}
    return parsed if isinstance(parsed, dict) else {"_raw_arguments": value}


def _block(block: Block, own: bool) -> dict[str, Any] | None:
    """One block as the API wants it; None when it cannot be sent. ``own``: the
    message came from this model, so vendor items and citations may go back."""
    if isinstance(block, TextBlock):
        if not block.text:
            return None  # the API refuses empty text blocks
        entry: dict[str, Any] = {"type": "text", "text": block.text}
        if own and block.citations:
            entry["citations"] = block.citations
        return entry
    if isinstance(block, ThinkingBlock):
        if block.wire is not None:
            # Byte for byte: a copy of the vendor block, never rebuilt.
            return copy.deepcopy(block.wire)
        if block.signature and not block.redacted:
            return {"type": "thinking", "thinking": block.text, "signature": block.signature}
        return None  # nothing the API would accept
    if isinstance(block, OpaqueBlock):
        return copy.deepcopy(block.wire)
    if isinstance(block, ToolUseBlock):
        return {
            "type": "tool_use",
            "id": block.id,
            "name": block.name,
            "input": _tool_input(block.input),
        }
    if isinstance(block, ToolResultBlock):
        content: list[dict[str, Any]] = []
        for part in block.content:
            if isinstance(part, TextBlock):
                if part.text:
                    content.append({"type": "text", "text": part.text})
            else:
                content.append(_image(part))
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_use_id}
        if content:
            result["content"] = content
        if block.is_error:
            result["is_error"] = True
        return result
    if isinstance(block, ImageBlock):
        return _image(block)
    return None


def to_wire_messages(
    messages: Iterable[Message], route: Route | str, *, cache: bool = True
) -> list[dict[str, Any]]:
    """The conversation as Messages API ``messages``.

    Thinking and opaque blocks go back unchanged only to the model that produced them
    (``route``; the streaming and batch presets count as the same model) and are left
    out elsewhere. With ``cache``, the last block of the last message that is not a
    thinking block carries the cache mark (on a copy: the stored block is not touched).
    """
    names = same_model_names(route)
    out: list[dict[str, Any]] = []
    for message in messages:
        own = message.model in names
        content: list[dict[str, Any]] = []
        for block in message.content:
            if not is_replayable(block, message, names):
                continue
            if isinstance(block, ThinkingBlock | OpaqueBlock) and message.role != "assistant":
                continue
            entry = _block(block, own)
            if entry is not None:
                content.append(entry)
        if content:
            out.append({"role": message.role, "content": content})
    if cache and out:
        last = out[-1]["content"]
        for index in range(len(last) - 1, -1, -1):
            if last[index].get("type") not in _THINKING_TYPES:
                last[index] = {**last[index], "cache_control": dict(CACHE_MARK)}
                break
    return out


def _tool_choice(choice: str) -> dict[str, Any]:
    if choice in ("auto", "any", "none"):
        return {"type": choice}
    return {"type": "tool", "name": choice}


def _thinking_fields(request: Request, route: Route) -> tuple[dict[str, Any], bool]:
    """(fields to add, whether the model will think) as seed 000's /thinking says."""
    mode = route.info.thinking or thinking_mode(route.model)
    always = mode == "always"
    asked = request.thinking
    if mode == "never" or asked is None:
        return {}, always
    fields: dict[str, Any] = {}
    if not asked.enabled:
        # A model that always thinks refuses `disabled`: send nothing at all.
        return ({}, True) if always else ({"thinking": {"type": "disabled"}}, False)
    if asked.effort is not None:
        effort = "low" if asked.effort == "minimal" else asked.effort
        if not supports_effort(route.model, effort):
            effort = "high"
        fields["output_config"] = {"effort": effort}
    config: dict[str, Any] | None = None
    if asked.budget_tokens is not None:
        config = {"type": "enabled", "budget_tokens": asked.budget_tokens}
    elif asked.adaptive:
        config = {"type": "adaptive"}
    elif asked.adaptive is None and asked.display is not None:
        # A display alone never turns thinking on for a model that thinks only when
        # asked; for a model that always thinks it only says how to show it.
        if always:
            config = {"type": "adaptive"}
    elif (
        asked.adaptive is None
        and asked.effort is None
        and asked.display is None
        and mode == "optional"
    ):
        # A bare ThinkingRequest() asks for thinking: let the model decide how much.
        config = {"type": "adaptive"}
    if config is not None:
        if asked.display is not None:
            config["display"] = asked.display
        fields["thinking"] = config
    return fields, always or config is not None


def _max_tokens(request: Request, route: Route, thinking: bool) -> int:
    """The caller's max_tokens as it is (never raised: its thinking budget was fitted
    under it, :mod:`modelplug_anthropic.budget`); without one, enough for an answer and
    for the thinking, within the model's output limit."""
    if request.max_tokens is not None:
        return request.max_tokens
    limit = route.info.max_output_tokens
    value = min(limit or DEFAULT_MAX_TOKENS, THINKING_MIN_TOKENS_HIGH)
    if thinking:
        effort = request.thinking.effort if request.thinking is not None else None
        floor = THINKING_MIN_TOKENS_HIGH if effort in _HIGH_EFFORTS else THINKING_MIN_TOKENS
        if limit is not None:
            floor = min(floor, limit)
        value = max(value, floor)
        budget = request.thinking.budget_tokens if request.thinking is not None else None
        if budget is not None and value <= budget:
            value = budget + THINKING_MIN_TOKENS
            if limit is not None and value > limit:
                # The API refuses max_tokens above the model's output limit; the budget
                # must leave room below it for the answer.
                if budget >= limit:
                    raise RequestError(
                        f"thinking budget_tokens {budget} leaves no room for an answer within "
                        f"{route.name}'s output limit of {limit} tokens; lower it"
                    )
                value = limit
    return value


def to_wire_params(request: Request, route: Route, *, cache: bool = True) -> dict[str, Any]:
    """The whole Messages API request body for ``request`` on ``route`` (no ``stream``
    flag: the caller adds what its endpoint needs). ``request.extra`` is merged last, so
    it can set any field the API knows and this mapping does not, except
    ``extra["betas"]``, which is no body field: it is sent as the ``anthropic-beta``
    header (:func:`betas_of`), as the SDK's ``betas=`` is. A thinking budget
    that does not fit under the caller's max_tokens is fitted first (:func:`fit_thinking`
    says what it changed)."""
    request, _ = fit_thinking(request, route)
    thinking_fields, thinking = _thinking_fields(request, route)
    params: dict[str, Any] = {
        "model": route.model,
        "max_tokens": _max_tokens(request, route, thinking),
    }
    if request.system:
        if cache:
            params["system"] = [
                {"type": "text", "text": request.system, "cache_control": dict(CACHE_MARK)}
            ]
        else:
            params["system"] = request.system
    params["messages"] = to_wire_messages(request.messages, route, cache=cache)
    tools = to_wire_tools(request.tools, request.server_tools, cache=cache)
    if tools:
        params["tools"] = tools
    if request.tool_choice is not None and tools:
        params["tool_choice"] = _tool_choice(request.tool_choice)
    forced = request.tool_choice not in (None, "auto", "any", "none")
    if forced and "thinking" in thinking_fields:
        # Claude refuses a forced tool with thinking on (tool-mode structured output
        # forces one): the forced tool wins and this request goes without thinking.
        thinking_fields = {k: v for k, v in thinking_fields.items() if k != "thinking"}
    params.update(thinking_fields)
    if request.output_schema is not None:
        # Native structured output: the text answer is constrained to the schema.
        output_config = dict(params.get("output_config", {}))
        output_config["format"] = {
            "type": "json_schema",
            "schema": request.output_schema.json_schema,
        }
        params["output_config"] = output_config
    if request.stop:
        params["stop_sequences"] = list(request.stop)
    for name in ("temperature", "top_p", "top_k"):
        value = getattr(request, name)
        if value is not None:
            params[name] = value
    params.update(request.extra)
    params.pop(BETAS, None)
    return params


def betas_of(request: Request) -> list[str]:
    """The beta features ``request.extra["betas"]`` asks for (a list of names, or one
    comma-separated string, the ``anthropic-beta`` header's own form), in order; the
    gateway passes a Messages client's ``anthropic-beta`` header on this way."""
    value = request.extra.get(BETAS)
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
        raise RequestError('extra["betas"] must be a list of beta names or one string')
    return [name.strip() for name in items if name.strip()]


# --------------------------------------------------------------------- from the wire


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    to_dict = getattr(value, "to_dict", None)
    if to_dict is not None:
        data: dict[str, Any] = to_dict(mode="json")
        return data
    raise TypeError(f"expected a Messages API message (dict or SDK model), got {type(value)}")


def _wire_block(block: Mapping[str, Any]) -> dict[str, Any]:
    """A plain copy of a vendor block with ``type`` first, as the API writes it."""
    return {"type": block["type"], **block}


def _search_view(block: Mapping[str, Any]) -> str | None:
    """A readable view of a server-tool block for display and for other providers."""
    kind = block.get("type")
    if kind == "server_tool_use":
        given = block.get("input")
        query = given.get("query") if isinstance(given, Mapping) else None
        return f"[{block.get('name')}: {query}]" if query else f"[{block.get('name')}]"
    if kind == "web_search_tool_result":
        content = block.get("content")
        if isinstance(content, list):
            lines = [
                f"- {item.get('title') or item.get('url')} ({item.get('url')})"
                for item in content
                if isinstance(item, Mapping)
            ]
            return "Web search results:\n" + "\n".join(lines) if lines else "Web search: no results"
        if isinstance(content, Mapping):
            return f"Web search failed: {content.get('error_code', 'error')}"
    return None


def stop_reason_from_wire(reason: str | None) -> StopReason:
    return _STOP_REASONS.get(reason or "", "other")


def from_wire_message(
    message: Any, route: Route | str, *, hide_thinking: bool = False, usage: Usage | None = None
) -> Response:
    """A Messages API message (a dict, or an SDK ``Message``) as a Response.

    Thinking blocks keep the vendor block in ``wire``; with ``hide_thinking`` their
    ``text`` is blank (the wire still holds it, and goes back unchanged). Server-tool
    blocks become OpaqueBlocks; citations stay on their text block. ``usage``: the
    caller's own reading of the counts; else the message's ``usage``
    (:meth:`usage_from_anthropic`), marked not reported when it has none.
    """
    data = _as_dict(message)
    name = route if isinstance(route, str) else route.name
    content: list[Block] = []
    for raw in data.get("content") or []:
        block = _as_dict(raw)
        kind = block.get("type")
        if kind == "text":
            citations = block.get("citations")
            content.append(
                TextBlock(
                    text=block.get("text", ""),
                    citations=[_as_dict(c) for c in citations] if citations else None,
                )
            )
        elif kind == "thinking":
            content.append(
                ThinkingBlock(
                    text="" if hide_thinking else block.get("thinking", ""),
                    signature=block.get("signature") or None,
                    wire=_wire_block(block),
                )
            )
        elif kind == "redacted_thinking":
            content.append(ThinkingBlock(redacted=True, wire=_wire_block(block)))
        elif kind == "tool_use":
            content.append(
                ToolUseBlock(id=block["id"], name=block["name"], input=block.get("input") or {})
            )
        elif kind is not None:
            content.append(
                OpaqueBlock(kind=kind, wire=_wire_block(block), text=_search_view(block))
            )
    if usage is None:
        usage = usage_from_anthropic(data.get("usage")) or Usage(reported=False)
    metadata: dict[str, Any] = {}
    for key in ("id", "stop_sequence"):
        if data.get(key) is not None:
            metadata[key] = data[key]
    # The model the server named, where it is not the route's (the key every provider
    # plugin records it under): what answered a dated alias, say.
    served = data.get("model")
    asked = route.model if not isinstance(route, str) else route.partition("/")[2]
    if isinstance(served, str) and served and served != asked:
        metadata["served_model"] = served
    return Response(
        message=Message(role="assistant", content=content, model=name),
        stop_reason=stop_reason_from_wire(data.get("stop_reason")),
        usage=usage,
        model=name,
        metadata=metadata,
    )
