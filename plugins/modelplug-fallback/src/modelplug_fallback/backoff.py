"""How long to wait before a retry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .options import FallbackOptions

__all__ = ["Wait", "retry_wait"]


@dataclass(frozen=True)
class Wait:
    """One wait: its length, whether the server asked for it, and what it asked."""

    delay: float
    asked: float | None = None

    @property
    def server_asked(self) -> bool:
        return self.asked is not None


def retry_wait(
    retry: int,
    retry_after: float | None,
    options: FallbackOptions,
    random: Callable[[], float],
) -> Wait:
    """The wait before retry number ``retry`` (1-based).

    The server's Retry-After wins when it sent one (cut to ``max_retry_after``): it is a
    real estimate, not a guess. Otherwise the wait doubles from ``backoff`` up to
    ``max_backoff``, with ``jitter`` of random slack either way so concurrent callers
    do not retry in lockstep.
    """
    if retry_after is not None:
        return Wait(min(retry_after, options.max_retry_after), retry_after)
    base = min(options.max_backoff, options.backoff * 2 ** (retry - 1))
    slack = options.jitter * (2 * random() - 1)
    return Wait(max(0.0, base * (1 + slack)))
