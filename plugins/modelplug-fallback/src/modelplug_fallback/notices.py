"""The Notice events this plugin yields: retry waits, recoveries, give-ups, switches.

Every message is one line a person can act on; ``details`` holds the same facts for a
program. No message holds a key: errors are described by their class and reason, and
core redacts every Notice again on its way out.
"""

from __future__ import annotations

from modelplug import ErrorClass, Notice

from .backoff import Wait

__all__ = [
    "describe",
    "fallback",
    "gave_up",
    "recovered",
    "retry_wait",
    "seconds",
    "skipped_only",
]


def describe(error_class: ErrorClass) -> str:
    """``rate limited (429)``: the reason and the HTTP status when known."""
    reason = error_class.reason or error_class.kind.replace("_", " ")
    if error_class.status is not None and str(error_class.status) not in reason:
        reason = f"{reason} ({error_class.status})"
    return reason


def seconds(value: float) -> str:
    """``2.5 s``, ``120 s``: a wait as a notice shows it."""
    return f"{value:.1f} s" if value < 10 else f"{value:.0f} s"


def retry_wait(model: str, error_class: ErrorClass, retry: int, retries: int, wait: Wait) -> Notice:
    asked = ""
    if wait.asked is not None:
        asked = " (the server asked for " + seconds(wait.asked)
        asked += ")" if wait.asked == wait.delay else f"; capped to {seconds(wait.delay)})"
    message = (
        f"{model}: {describe(error_class)}; retry {retry} of {retries} in "
        f"{seconds(wait.delay)}{asked}"
    )
    return Notice(
        kind="retry",
        message=message,
        delay=wait.delay,
        details={
            "phase": "wait",
            "model": model,
            "reason": describe(error_class),
            "error": error_class.kind,
            "status": error_class.status,
            "attempt": retry,
            "retries": retries,
            "server_asked": wait.server_asked,
            "retry_after": wait.asked,
        },
    )


def recovered(model: str, retry: int, retries: int) -> Notice:
    return Notice(
        kind="retry",
        message=f"{model}: recovered on retry {retry} of {retries}",
        details={"phase": "recovered", "model": model, "attempt": retry, "retries": retries},
    )


def gave_up(
    model: str, error_class: ErrorClass, retries_done: int, retries: int, why: str
) -> Notice:
    return Notice(
        kind="retry",
        message=f"{model}: giving up after {retries_done} of {retries} retries ({why})",
        details={
            "phase": "gave_up",
            "model": model,
            "reason": describe(error_class),
            "error": error_class.kind,
            "status": error_class.status,
            "attempt": retries_done,
            "retries": retries,
            "why": why,
        },
    )


def _skips(skipped: list[tuple[str, str]]) -> str:
    return "; ".join(f"skipped {spec}: {reason}" for spec, reason in skipped)


def fallback(old: str, new: str, reason: str, skipped: list[tuple[str, str]]) -> Notice:
    message = f"{old} failed ({reason}); falling back to {new}"
    if skipped:
        message += f" ({_skips(skipped)})"
    return Notice(
        kind="fallback",
        message=message,
        details={
            "from": old,
            "to": new,
            "reason": reason,
            "skipped": [{"spec": s, "reason": r} for s, r in skipped],
        },
    )


def skipped_only(model: str, skipped: list[tuple[str, str]], using: str | None) -> Notice:
    """Fallback candidates that could not be built, when no switch names them."""
    tail = f"; using {using}" if using else "; no fallback left"
    return Notice(
        kind="fallback",
        message=f"{model}: {_skips(skipped)}{tail}",
        details={
            "from": model,
            "to": using,
            "skipped": [{"spec": s, "reason": r} for s, r in skipped],
        },
    )
