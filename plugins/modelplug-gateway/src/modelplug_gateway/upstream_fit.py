"""What a Messages body's extras become on the upstream its model resolves to.

A Messages client may send what the gateway's neutral Request has no field for: a
top-level field the shape does not read (a beta feature such as Claude Code's
``context_management``), an ``anthropic-beta`` header, and ``role: "system"`` messages
inside the conversation. The route is known before anything is sent (the stream's
headers included), so each call gets what its upstream can take:

- **An Anthropic upstream** (provider type ``anthropic``) gets the fields verbatim
  through ``Request.extra``, which modelplug-anthropic merges into its body last, and
  the beta names as ``extra["betas"]``, which it sends as the ``anthropic-beta`` header.
  A system message's text is appended to the top-level system prompt, in conversation
  order, after the request's own: the one place the Messages API takes system text.
- **Any other upstream** gets neither the fields nor the betas: their names are
  returned, for the ``x-modelplug-dropped`` header and the operator's log. A system
  message's text is folded into the conversation: a text block marked
  ``<system>...</system>`` at the head of the next user message (after its tool results,
  which must come first), else at the end of the last user message before it, else as
  a user message of its own.

A Responses client (:mod:`.shapes.responses_request`) is treated the same way, its own
upstream type being ``openai-responses``: there the caller's tools, input and unknown
fields go as sent. Elsewhere what the Request could not carry is named
(``Parsed.unserved``), and so are two things left out for that route alone: web search
on a provider that runs none, and reasoning items another model wrote.

A request with none of these (nearly every call) is returned as it is, at the cost of
a few truth tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .replay_target import ANTHROPIC_TYPES

if TYPE_CHECKING:
    from modelplug import Message, Request, Route

    from .shapes.base import Parsed

__all__ = ["SEARCH_TYPES", "fit_to_route", "marked_system_text"]

SEARCH_TYPES = frozenset({"anthropic", "gemini", "openai-responses"})
"""The provider types whose plugins run a web search the request asks for."""


def fit_to_route(parsed: Parsed, route: Route) -> tuple[Request, tuple[str, ...]]:
    """The request to send ``route``, and the names of the fields left out for it
    (sorted; empty when nothing was)."""
    request = parsed.request
    if parsed.name_all_drops:
        return _fit_naming_drops(parsed, route)
    if not parsed.passthrough and not parsed.system_notes and not parsed.betas:
        return request, ()
    update: dict[str, Any] = {}
    if route.endpoint.type in parsed.own_types:
        if parsed.passthrough or parsed.betas:
            extra = {**request.extra, **parsed.passthrough}
            if parsed.betas:
                extra["betas"] = list(parsed.betas)
            update["extra"] = extra
        if parsed.system_notes:
            texts = [request.system or "", *(text for _, text in parsed.system_notes)]
            update["system"] = "\n\n".join(t for t in texts if t)
        return request.model_copy(update=update), ()
    if parsed.system_notes:
        update["messages"] = _folded(request.messages, parsed.system_notes)
    fitted = request.model_copy(update=update) if update else request
    return fitted, tuple(sorted(parsed.passthrough))


def _fit_naming_drops(parsed: Parsed, route: Route) -> tuple[Request, tuple[str, ...]]:
    """:func:`fit_to_route` for a shape that names everything left out."""
    request = parsed.request
    kind = route.endpoint.type
    own = kind in parsed.own_types
    dropped = set() if own else set(parsed.unserved)
    update: dict[str, Any] = {}
    notes = parsed.system_notes
    if own and parsed.passthrough:
        update["extra"] = {**request.extra, **parsed.passthrough}
        if "input" in parsed.passthrough:
            # The caller's items go as sent, its system and developer messages among
            # them: the instructions are only the request's own, nothing is folded in.
            update["system"] = parsed.echo.get("instructions")
            notes = ()
    if request.server_tools and kind not in SEARCH_TYPES:
        dropped.add("tools.web_search")
        update["server_tools"] = []
    if _foreign_reasoning(request.messages, route.name):
        dropped.add("input.reasoning")
    if notes:
        if kind in ANTHROPIC_TYPES:
            texts = [request.system or "", *(text for _, text in notes)]
            update["system"] = "\n\n".join(t for t in texts if t)
        else:
            update["messages"] = _folded(request.messages, notes)
    fitted = request.model_copy(update=update) if update else request
    return fitted, tuple(sorted(dropped))


def _foreign_reasoning(messages: list[Message], target: str) -> bool:
    """Whether any reasoning block in ``messages`` was written by another model than
    ``target``: the replay rule leaves it out of the call."""
    from modelplug import OpaqueBlock, ThinkingBlock, is_replayable

    return any(
        isinstance(block, ThinkingBlock | OpaqueBlock) and not is_replayable(block, message, target)
        for message in messages
        if message.role == "assistant"
        for block in message.content
    )


def marked_system_text(text: str) -> str:
    """A system message's text as it goes inside a user message."""
    return f"<system>\n{text}\n</system>"


def _folded(messages: list[Message], notes: tuple[tuple[int, str], ...]) -> list[Message]:
    from modelplug import Message, TextBlock, ToolResultBlock

    out = list(messages)
    heads: dict[int, list[str]] = {}  # message index -> texts to put at its head
    tails: dict[int, list[str]] = {}  # ... at its end
    alone: list[tuple[int, str]] = []
    for at, text in notes:
        after = next((i for i in range(at, len(out)) if out[i].role == "user"), None)
        if after is not None:
            heads.setdefault(after, []).append(text)
            continue
        before = next((i for i in range(at - 1, -1, -1) if out[i].role == "user"), None)
        if before is not None:
            tails.setdefault(before, []).append(text)
        else:
            alone.append((at, text))
    for i in set(heads) | set(tails):
        content = list(out[i].content)
        # Tool results first: both Messages and Chat Completions want them right after
        # the call they answer.
        first = 0
        while first < len(content) and isinstance(content[first], ToolResultBlock):
            first += 1
        head = [TextBlock(text=marked_system_text(t)) for t in heads.get(i, ())]
        tail = [TextBlock(text=marked_system_text(t)) for t in tails.get(i, ())]
        content = [*content[:first], *head, *content[first:], *tail]
        out[i] = out[i].model_copy(update={"content": content})
    for at, text in reversed(alone):
        out.insert(at, Message(role="user", content=[TextBlock(text=marked_system_text(text))]))
    return out
