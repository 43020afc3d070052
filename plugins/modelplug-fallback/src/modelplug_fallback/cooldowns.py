"""The cooldown table: which models failed lately, and for how much longer to skip them.

Process-wide by default (every Client in the process shares :data:`SHARED`), keyed by
``provider/model``. The table sits behind :class:`CooldownStore`, a protocol of three
methods in *relative* seconds, so a store shared between processes (Redis ``SET key
PX ms`` / ``PTTL key``) can replace it without agreeing on a clock. Such a store may
implement the methods as coroutines instead (:class:`AsyncCooldownStore`); the policy
awaits whatever is awaitable. A store that can list what cools down (for ``modelplug
cooldowns``) has a fourth, ``cooling()``: every key cooling down and its seconds left,
as a dict (or a coroutine of one).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

__all__ = ["SHARED", "AnyCooldownStore", "AsyncCooldownStore", "CooldownStore", "MemoryCooldowns"]


@runtime_checkable
class CooldownStore(Protocol):
    """Where cooldowns live."""

    def mark(self, key: str, seconds: float) -> None:
        """Skip ``key`` for the next ``seconds`` (never shortens a longer cooldown)."""

    def remaining(self, key: str) -> float:
        """Seconds ``key`` is still cooling down; 0 when it is free."""

    def clear(self, key: str) -> None:
        """Forget ``key``'s cooldown (it just answered)."""


@runtime_checkable
class AsyncCooldownStore(Protocol):
    """The same three methods as coroutines, for a store across the network (Redis):
    the policy awaits them. A store that cannot reach its backend answers from its own
    memory (or raises, when it is set to fail closed) rather than hang."""

    async def mark(self, key: str, seconds: float) -> None: ...

    async def remaining(self, key: str) -> float: ...

    async def clear(self, key: str) -> None: ...


AnyCooldownStore = CooldownStore | AsyncCooldownStore
"""What a FallbackPolicy takes as its ``store``."""


class MemoryCooldowns:
    """A cooldown table in this process's memory; safe across threads.

    :param clock: a monotonic clock in seconds (inject one in tests).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()

    def mark(self, key: str, seconds: float) -> None:
        until = self.clock() + seconds
        with self._lock:
            self._until[key] = max(until, self._until.get(key, until))

    def remaining(self, key: str) -> float:
        with self._lock:
            until = self._until.get(key)
            if until is None:
                return 0.0
            left = until - self.clock()
            if left <= 0:
                del self._until[key]
                return 0.0
            return left

    def clear(self, key: str) -> None:
        with self._lock:
            self._until.pop(key, None)

    def cooling(self) -> dict[str, float]:
        """Every key cooling down now, and for how many more seconds."""
        now = self.clock()
        with self._lock:
            return {key: until - now for key, until in self._until.items() if until > now}

    def reset(self) -> None:
        """Forget every cooldown."""
        with self._lock:
            self._until.clear()

    def __repr__(self) -> str:
        with self._lock:
            keys = sorted(self._until)
        return f"MemoryCooldowns({keys})"


SHARED = MemoryCooldowns()
"""The table every policy uses unless it is given its own store."""
