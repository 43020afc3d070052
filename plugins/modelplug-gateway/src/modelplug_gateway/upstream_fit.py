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

A request with none of these (nearly every call) is returned as it is, at the cost of
three truth tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .replay_target import ANTHROPIC_TYPES

if TYPE_CHECKING:
    from modelplug import Message, Request, Route

    from .shapes.base import Parsed

__all__ = ["fit_to_route", "marked_system_text"]


def fit_to_route(parsed: Parsed, route: Route) -> tuple[Request, tuple[str, ...]]:
    """The request to send ``route``, and the names of the fields left out for it
    (sorted; empty when nothing was)."""
    request = parsed.request
    if not parsed.passthrough and not parsed.system_notes and not parsed.betas:
        return request, ()
    update: dict[str, Any] = {}
    if route.endpoint.type in ANTHROPIC_TYPES:
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
