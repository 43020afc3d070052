"""Which model a Messages client's replayed thinking belongs to.

The Messages shape marks the assistant messages a client sends back with the model the
request names, so :mod:`modelplug.contract.replay` returns their thinking blocks byte for byte
to that model and no other. When the request names an alias or a role, that mark is
not a ``provider/model`` and nothing would be replayed: the thinking of a Claude
conversation reached through ``"fast"`` would be lost on every turn.

So the mark becomes the route the name resolves to, when that route is an Anthropic
one: the Messages shape carries Anthropic's thinking blocks and nothing else, and no
other provider takes them byte for byte. A name that now resolves to a non-Claude
model keeps the caller's name as its mark, and its thinking is dropped, as before.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from modelplug import Client

    from .shapes.base import Parsed

__all__ = ["ANTHROPIC_TYPES", "mark_replay_target"]

ANTHROPIC_TYPES = frozenset({"anthropic"})


def mark_replay_target(
    parsed: Parsed, client: Client, types: frozenset[str] = ANTHROPIC_TYPES
) -> Parsed:
    """``parsed`` with its replayed assistant messages marked with the route of one of
    ``types`` (the caller's API's own: Anthropic's for the Messages shape, the Responses
    API's for that shape) its model name resolves to; unchanged (the same object) when
    there is nothing to do, which is every request without reasoning sent back."""
    from modelplug import OpaqueBlock, ThinkingBlock

    messages = parsed.request.messages
    marked = [
        i
        for i, message in enumerate(messages)
        if message.model == parsed.model
        and any(isinstance(b, ThinkingBlock | OpaqueBlock) for b in message.content)
    ]
    if not marked:
        return parsed
    try:
        route = client.resolve(parsed.model)
    except Exception:  # the call itself reports a name that does not resolve
        return parsed
    if route.endpoint.type not in types or route.name == parsed.model:
        return parsed
    updated = list(messages)
    for i in marked:
        updated[i] = messages[i].model_copy(update={"model": route.name})
    request = parsed.request.model_copy(update={"messages": updated})
    return dataclasses.replace(parsed, request=request)
