"""What ``on_retry`` and ``on_usage`` are handed: a retry's wait as it happens, and each
finished call's usage and cost.

A wait is otherwise invisible to the person watching: a call sits mute through a 429's
Retry-After and then either answers or fails. The policies that retry (modelplug-fallback)
already say every wait, recovery and give-up as a Notice of kind ``"retry"``; core turns
each into a :class:`RetryEvent` (see :meth:`RetryEvent.from_notice`) for the callbacks,
so a policy of your own is heard the same way by yielding such a Notice:

- ``details["phase"]``: ``"wait"`` (with ``Notice.delay``, the seconds), ``"recovered"``
  or ``"gave_up"``;
- ``details["attempt"]`` (the retry this is, from 1) and ``details["retries"]`` (how
  many the policy allows); ``details["model"]`` (the ``provider/model`` retried);
  ``details["reason"]`` (a short line: ``rate limited (429)``) and ``details["status"]``
  (the HTTP status) when known.

Plain frozen dataclasses: reading one never imports pydantic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

if TYPE_CHECKING:
    from modelplug.contract.types import Cost, Notice, Response, Usage

__all__ = [
    "RETRY_NOTICE",
    "RetryCallback",
    "RetryEvent",
    "RetryOutcome",
    "UsageCallback",
    "UsageEvent",
]

#: The Notice kind a retrying policy says its waits with.
RETRY_NOTICE = "retry"
RetryOutcome: TypeAlias = Literal["waiting", "recovered", "gave_up"]
_OUTCOMES: dict[object, RetryOutcome] = {
    "wait": "waiting",
    "recovered": "recovered",
    "gave_up": "gave_up",
}


@dataclass(frozen=True)
class RetryEvent:
    """One report of a retry: a wait before the next attempt (``outcome="waiting"``),
    then once more when a later attempt answered (``"recovered"``) or the policy stopped
    retrying (``"gave_up"``; the call's error, or a fallback, follows).

    - ``attempt``: the retry this is about, from 1; ``max_attempts``: how many retries
      the policy allows.
    - ``wait_s``: seconds until the next attempt; 0 unless waiting.
    - ``reason``: why (``rate limited (429)``); ``status``: the HTTP status, when known.
    - ``route``: the ``provider/model`` retried; ``message``: the whole line, as a
      person reads it.
    """

    attempt: int
    max_attempts: int
    wait_s: float
    reason: str
    route: str
    outcome: RetryOutcome
    status: int | None = None
    message: str = ""

    @classmethod
    def from_notice(cls, notice: Notice) -> RetryEvent | None:
        """The event a retry Notice says, or None for any other Notice (or a retry
        Notice without a phase this module knows)."""
        if notice.kind != RETRY_NOTICE:
            return None
        details = notice.details
        outcome = _OUTCOMES.get(details.get("phase"))
        if outcome is None:
            return None
        status = details.get("status")
        reason = details.get("why") or details.get("reason") or details.get("error") or ""
        return cls(
            attempt=_whole(details.get("attempt")),
            max_attempts=_whole(details.get("retries")),
            wait_s=float(notice.delay or 0.0) if outcome == "waiting" else 0.0,
            reason=str(reason),
            route=str(details.get("model") or ""),
            outcome=outcome,
            status=status if isinstance(status, int) else None,
            message=notice.message,
        )


@dataclass(frozen=True)
class UsageEvent:
    """One finished call: its ``usage`` (tokens; ``usage.reported`` False when
    estimated), its ``cost`` (None when no pricing table knows the model: unknown,
    never zero), the ``route`` (``provider/model``) that answered, and the whole
    ``response``. Fired once per call that ended with a Response, a call whose tool
    call was cut included (it was paid for)."""

    usage: Usage
    cost: Cost | None
    route: str
    response: Response


#: What ``on_retry`` takes: a function of a RetryEvent, plain or ``async``.
RetryCallback: TypeAlias = Callable[[RetryEvent], object]
#: What ``on_usage`` takes: a function of a UsageEvent, plain or ``async``.
UsageCallback: TypeAlias = Callable[[UsageEvent], object]


def _whole(value: object) -> int:
    return value if isinstance(value, int) else 0
