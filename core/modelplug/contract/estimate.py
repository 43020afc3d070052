"""The one token estimate, for servers that report no usage.

Four characters per token, rounded up: the rule of thumb every adapter here used, kept
in one place so an estimate means the same thing whichever plugin made it. A Usage
built from it says ``reported=False``, so a caller can tell it from the server's word.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from modelplug.contract.types import Request, Usage

__all__ = [
    "CHARS_PER_TOKEN",
    "count_words",
    "estimate_tokens",
    "estimated_usage",
    "fewest_prompt_tokens",
    "prompt_texts",
]

CHARS_PER_TOKEN = 4


def estimate_tokens(chars: int | str) -> int:
    """Tokens in ``chars`` characters (or in a string), rounded up; 0 for nothing."""
    count = len(chars) if isinstance(chars, str) else chars
    return -(-max(0, count) // CHARS_PER_TOKEN)


def estimated_usage(sent_chars: int, got_chars: int) -> Usage:
    """A Usage estimated from the characters sent and received, ``reported=False``."""
    from modelplug.contract.types import Usage

    return Usage(
        input=estimate_tokens(sent_chars), output=estimate_tokens(got_chars), reported=False
    )


def prompt_texts(request: Request) -> Iterator[str]:
    """The text a request sends as its prompt: the system prompt, every text block,
    tool results, tool calls written as text, and the tools' names and descriptions.
    Thinking is left out (providers may drop it) and so are images: what is counted
    is surely sent."""
    from modelplug.contract.types import TextBlock, ToolResultBlock, ToolUseBlock

    if request.system:
        yield request.system
    for tool in request.tools:
        yield tool.name
        if tool.description:
            yield tool.description
    for message in request.messages:
        for block in message.content:
            if isinstance(block, TextBlock):
                yield block.text
            elif isinstance(block, ToolResultBlock):
                for part in block.content:
                    if isinstance(part, TextBlock):
                        yield part.text
            elif isinstance(block, ToolUseBlock) and isinstance(block.input, str):
                yield block.input


def fewest_prompt_tokens(request: Request, above: int) -> tuple[int, int] | None:
    """``(tokens, characters)`` when the prompt is surely longer than ``above`` tokens,
    else None. ``tokens`` is its count of words, a floor for every tokenizer in use
    (none joins two whitespace-separated words into one token), so a prompt that fits
    is never called too long; ``characters`` is the text's length, for an estimate.

    Words are counted only when the characters could hold more than ``above`` of them
    (a text of n characters has at most n // 2 + 1), so a prompt well inside the
    window costs one pass over the lengths.
    """
    texts = list(prompt_texts(request))
    characters = sum(len(text) for text in texts)
    if characters // 2 + len(texts) <= above:
        return None
    words = sum(count_words(text) for text in texts)
    return (words, characters) if words > above else None


# Words are counted a slice at a time: str.split() on a whole 10 MB prompt would hold
# two million strings at once.
_SLICE = 1 << 16


def count_words(text: str) -> int:
    """Whitespace-separated words in ``text``, as ``len(text.split())``, in bounded memory."""
    if len(text) <= _SLICE:
        return len(text.split())
    count = 0
    for start in range(0, len(text), _SLICE):
        count += len(text[start : start + _SLICE].split())
        if start and not text[start - 1].isspace() and not text[start].isspace():
            count -= 1  # a word the slice boundary cut in two
    return count
