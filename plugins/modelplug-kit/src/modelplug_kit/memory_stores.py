"""The cooldown table and the counters in this process's memory: the stores a policy
uses when told to keep its state in the process (``store = "memory"``), and the memory a
shared store (modelplug-redis) answers from while its backend is down.

Both satisfy their protocols in :mod:`modelplug_kit.stores` (the counters' plain methods
``reserve_now``, ``settle_now`` and ``read_now`` beside the coroutines, for callers that
hold no event loop). Every method holds one lock and never awaits while holding it, so
both are safe across threads and tasks.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence

from .stores import Charge, Outcome, Setting

__all__ = ["MemoryCooldowns", "MemoryCounters"]

TAKEN = Outcome()  # every charge taken (an Outcome is frozen: one serves every call)
SWEEP_EVERY = 60.0  # seconds between sweeps of the counters whose window ended


class MemoryCooldowns:
    """A cooldown table in this process's memory; safe across threads.

    :param clock: a monotonic clock in seconds (inject one in tests).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()

    def mark(self, key: str, seconds: float) -> None:
        """Skip ``key`` for the next ``seconds`` (never shortens a longer cooldown)."""
        until = self.clock() + seconds
        with self._lock:
            self._until[key] = max(until, self._until.get(key, until))

    def remaining(self, key: str) -> float:
        """Seconds ``key`` is still cooling down; 0 when it is free."""
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
        """Forget ``key``'s cooldown (it just answered)."""
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


class MemoryCounters:
    """Counters in this process's memory; safe across threads and tasks (every method
    holds one lock and never awaits while holding it).

    :param clock: seconds (inject a fake one in tests).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._values: dict[str, tuple[int, float]] = {}  # key -> (value, expires at)
        self._lock = threading.Lock()
        self._sweep_at = 0.0

    def _live(self, key: str, now: float) -> tuple[int, float] | None:
        entry = self._values.get(key)
        if entry is not None and entry[1] <= now:
            del self._values[key]
            return None
        return entry

    def _sweep(self, now: float) -> None:
        # Window counters are named per window, so an ended one is never read again:
        # drop them now and then, or they would pile up.
        if now >= self._sweep_at:
            self._values = {k: v for k, v in self._values.items() if v[1] > now}
            self._sweep_at = now + SWEEP_EVERY

    def reserve_now(self, charges: Sequence[Charge]) -> Outcome:
        """Take every charge, or none and say which did not fit (no event loop needed)."""
        now = self.clock()
        with self._lock:
            self._sweep(now)
            live = self._live  # looked up once: a model group's pick comes here every call
            for index, charge in enumerate(charges):
                entry = live(charge.key, now)
                if charge.kind == "countdown":
                    if entry is not None and entry[0] < charge.amount:
                        return Outcome(index, entry[0], entry[1] - now)
                    continue
                value = entry[0] if entry else 0
                if charge.limit is not None and value + charge.amount > charge.limit:
                    if charge.amount > charge.limit:
                        return Outcome(index, value, math.inf)
                    left = entry[1] - now - charge.grace if entry else 0.0
                    return Outcome(index, value, max(0.0, left))
            values = self._values
            for charge in charges:
                entry = live(charge.key, now)
                if charge.kind == "countdown":
                    if entry is not None:
                        values[charge.key] = (entry[0] - charge.amount, entry[1])
                elif entry is None:
                    values[charge.key] = (charge.amount, now + charge.ttl + charge.grace)
                else:
                    until = now + charge.ttl + charge.grace if charge.refresh else entry[1]
                    values[charge.key] = (entry[0] + charge.amount, until)
        return TAKEN

    def settle_now(self, adjust: Sequence[Charge], learned: Sequence[Setting]) -> None:
        """Add each ``adjust`` amount to its counter if it still exists, and set each
        ``learned`` counter (no event loop needed)."""
        now = self.clock()
        with self._lock:
            values = self._values
            for charge in adjust:
                entry = self._live(charge.key, now)
                if entry is not None:
                    values[charge.key] = (max(0, entry[0] + charge.amount), entry[1])
            for setting in learned:
                values[setting.key] = (setting.value, now + setting.ttl)

    def read_now(self, keys: Sequence[str]) -> list[tuple[int, float] | None]:
        """Each counter's value and seconds left, or None when absent (no event loop needed)."""
        now = self.clock()
        found: list[tuple[int, float] | None] = []
        with self._lock:
            values = self._values
            for key in keys:  # _live's work inline: a pick reads five keys a deployment
                entry = values.get(key)
                if entry is not None and entry[1] <= now:
                    del values[key]
                    entry = None
                found.append(None if entry is None else (entry[0], entry[1] - now))
        return found

    async def reserve(self, charges: Sequence[Charge]) -> Outcome:
        """Take every charge, or none and say which did not fit."""
        return self.reserve_now(charges)

    async def settle(self, adjust: Sequence[Charge], learned: Sequence[Setting]) -> str | None:
        """Add each ``adjust`` amount to its counter if it still exists, and set each
        ``learned`` counter; never degraded (None)."""
        self.settle_now(adjust, learned)
        return None

    async def read(self, keys: Sequence[str]) -> list[tuple[int, float] | None]:
        """Each counter's value and seconds left, or None when absent."""
        return self.read_now(keys)

    def live_keys(self) -> list[str]:
        """The live counters' keys (for ``modelplug limits``)."""
        now = self.clock()
        with self._lock:
            return sorted(k for k in list(self._values) if self._live(k, now) is not None)

    def reset(self) -> None:
        """Forget every counter."""
        with self._lock:
            self._values.clear()

    def __repr__(self) -> str:
        return f"MemoryCounters({len(self._values)} counters)"
