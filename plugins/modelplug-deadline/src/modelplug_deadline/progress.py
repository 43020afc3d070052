"""The notices a deadline route adds: progress while a request waits on ``slow`` and
the move to ``fast``. Both are ``retry`` notices, so ``on_retry`` (and the CLI's live
line) shows them."""

from __future__ import annotations

from modelplug import Notice

__all__ = ["BATCH_KINDS", "moved", "waiting"]

# The Batch route's notices: the batch id when it starts, a status line every minute.
BATCH_KINDS = frozenset({"batch", "batch_status"})


def span(seconds: float) -> str:
    """``seconds`` as a person reads a wait: ``45 s``, ``20 min``, ``2.5 h``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def waiting(notice: Notice, slow: str, fast: str, left: float | None) -> Notice:
    """The Batch route's ``notice`` as a wait ``on_retry`` reports: what it said, and
    when the request moves to ``fast`` (``left`` seconds; None: never)."""
    then = f" It moves to {fast} in {span(left)} if no answer came." if left is not None else ""
    return Notice(
        kind="retry",
        message=f"{notice.message}{then}",
        delay=left,
        details={
            **notice.details,
            "notice": notice.kind,
            "phase": "wait",
            "model": slow,
            "reason": "waiting on the slow route",
            "attempt": 0,
            "retries": 0,
        },
    )


def moved(slow: str, fast: str, why: str, waited: float, batch_id: str | None) -> Notice:
    """The request left ``slow`` (its batch cancelled) for ``fast``."""
    batch = f" (batch {batch_id} cancelled)" if batch_id else ""
    return Notice(
        kind="retry",
        message=f"{slow}: no answer after {span(waited)}{batch}; {why}: sending to {fast}",
        details={
            "phase": "gave_up",
            "model": slow,
            "reason": why,
            "why": why,
            "attempt": 0,
            "retries": 0,
            "batch_id": batch_id,
            "fast": fast,
        },
    )
