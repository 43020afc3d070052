"""Which blocks may be sent back to which model.

Thinking blocks and opaque vendor items (signatures, encrypted reasoning, server-tool
blocks) are valid only for the model that produced them: a provider rejects foreign or
modified ones. They are replayed only when the message's ``model`` (and the block's own
``origin``, when set) is the target ``provider/model``. Everything else — text, tool
calls, tool results, images — is portable. The stored conversation keeps everything, so
switching back to the original model replays its own reasoning again.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from modelplug.contract.types import Block, Message, OpaqueBlock, Route, ThinkingBlock

__all__ = ["is_replayable", "replayable_blocks", "replayable_messages"]


def is_replayable(block: Block, message: Message, target: str | Collection[str]) -> bool:
    """Whether ``block`` of ``message`` may go to the model named ``target``
    (``provider/model``). ``target`` may be a set of names that are one model, such as
    a vendor's streaming and batch routes to it."""
    if not isinstance(block, ThinkingBlock | OpaqueBlock):
        return True
    if isinstance(target, str):
        return message.model == target and (block.origin is None or block.origin == target)
    return message.model in target and (block.origin is None or block.origin in target)


def replayable_blocks(message: Message, target: str) -> list[Block]:
    """The blocks of ``message`` that may be sent to ``target``."""
    return [b for b in message.content if is_replayable(b, message, target)]


def replayable_messages(messages: Iterable[Message], route: Route | str) -> list[Message]:
    """The conversation as it may be sent to ``route``.

    A message left with no content after filtering (a thinking-only answer) is dropped:
    providers refuse empty content.
    """
    target = route.name if isinstance(route, Route) else route
    out: list[Message] = []
    for message in messages:
        blocks = replayable_blocks(message, target)
        if len(blocks) == len(message.content):
            out.append(message)
        elif blocks:
            out.append(message.model_copy(update={"content": blocks}))
    return out
