"""The one token estimate, for servers that report no usage.

Four characters per token, rounded up: the rule of thumb every adapter here used, kept
in one place so an estimate means the same thing whichever plugin made it. A Usage
built from it says ``reported=False``, so a caller can tell it from the server's word.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .types import Usage

__all__ = ["CHARS_PER_TOKEN", "estimate_tokens", "estimated_usage"]

CHARS_PER_TOKEN = 4


def estimate_tokens(chars: int | str) -> int:
    """Tokens in ``chars`` characters (or in a string), rounded up; 0 for nothing."""
    count = len(chars) if isinstance(chars, str) else chars
    return -(-max(0, count) // CHARS_PER_TOKEN)


def estimated_usage(sent_chars: int, got_chars: int) -> Usage:
    """A Usage estimated from the characters sent and received, ``reported=False``."""
    from .types import Usage

    return Usage(
        input=estimate_tokens(sent_chars), output=estimate_tokens(got_chars), reported=False
    )
