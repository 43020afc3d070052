"""The time a deadline policy reads and waits on; tests give their own."""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

__all__ = ["Clock", "SystemClock"]


class Clock(Protocol):
    """Wall-clock time (``switch_at`` is an instant) and a wait until a moment of it."""

    def now(self) -> float:
        """Unix time in seconds."""
        ...

    async def sleep_until(self, moment: float) -> None:
        """Return once :meth:`now` has reached ``moment``."""
        ...


class SystemClock:
    """The machine's clock. Waits in slices of a minute at most, so a machine that
    slept (or a clock that was set) still switches close to the moment asked."""

    def now(self) -> float:
        return time.time()

    async def sleep_until(self, moment: float) -> None:
        while (left := moment - time.time()) > 0:
            await asyncio.sleep(min(left, 60.0))

    def __repr__(self) -> str:
        return "SystemClock()"
