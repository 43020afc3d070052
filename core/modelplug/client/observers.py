"""The ``on_retry`` and ``on_usage`` callbacks of one call: the Client's and the call's
own, called in that order, plain or ``async``.

A callback that raises does not break the call: what it raised is logged as a warning on
the ``modelplug`` logger (with its traceback) and the call goes on. A callback reports;
the call's outcome is the model's, not the observer's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from inspect import isawaitable
from typing import TYPE_CHECKING, TypeVar

from modelplug.contract.observers import RETRY_NOTICE, RetryEvent, UsageEvent

if TYPE_CHECKING:
    from modelplug.contract.observers import RetryCallback, UsageCallback
    from modelplug.contract.types import Notice, Response

__all__ = ["Observers"]

log = logging.getLogger("modelplug")
E = TypeVar("E", RetryEvent, UsageEvent)


@dataclass(frozen=True)
class Observers:
    """The callbacks one call reports to."""

    on_retry: Sequence[RetryCallback] = ()
    on_usage: Sequence[UsageCallback] = ()

    @classmethod
    def of(
        cls,
        on_retry: Sequence[RetryCallback | None],
        on_usage: Sequence[UsageCallback | None],
    ) -> Observers | None:
        """The observers among those given (None ones left out); None when there are
        none, so a call without any pays nothing per event."""
        retry = [callback for callback in on_retry if callback is not None]
        usage = [callback for callback in on_usage if callback is not None]
        if not retry and not usage:
            return None
        return cls(retry, usage)

    async def notice(self, notice: Notice) -> None:
        """Report ``notice`` to ``on_retry`` when it says a retry's wait or end."""
        if not self.on_retry or notice.kind != RETRY_NOTICE:
            return
        event = RetryEvent.from_notice(notice)
        if event is None:
            return
        for callback in self.on_retry:
            await _called("on_retry", callback, event)

    async def finished(self, response: Response) -> None:
        """Report a finished call's usage and cost to ``on_usage``."""
        if not self.on_usage:
            return
        event = UsageEvent(
            usage=response.usage,
            cost=response.cost,
            route=response.model or "",
            response=response,
        )
        for callback in self.on_usage:
            await _called("on_usage", callback, event)


async def _called(name: str, callback: Callable[[E], object], event: E) -> None:
    """``callback(event)``, awaited when it is ``async``; what it raises is logged."""
    try:
        result = callback(event)
        if isawaitable(result):
            await result
    except Exception:
        log.warning(
            "modelplug: the %s callback %r raised; the call goes on", name, callback, exc_info=True
        )
