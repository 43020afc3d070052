"""Counters in windows: the one store the rate windows and the budgets share.

A reservation is a list of :class:`Charge` objects applied all or nothing, in one
atomic step, so two callers (tasks, threads, processes through modelplug-redis) never
both take the last room. Amounts are whole numbers: requests, tokens, and money in
nano-units of its currency (see :mod:`modelplug_limits.money`), so a store never does
floating-point money. Times are *relative* seconds, so stores need no shared clock.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

__all__ = ["SHARED", "Charge", "CounterStore", "MemoryCounters", "Outcome", "Setting"]

SWEEP_EVERY = 60.0  # seconds between sweeps of ended counters


@dataclass(frozen=True)
class Charge:
    """One amount taken from one counter.

    ``kind="count"``: the counter (0 when absent) plus ``amount`` must stay within
    ``limit``; a new counter lives ``ttl`` seconds (its window). ``kind="countdown"``:
    a room the server told us about (``remaining`` in a rate-limit header); when the
    counter exists, it must hold at least ``amount`` and goes down by it; when it does
    not, the charge always fits. ``refresh``: every write renews the ``ttl`` (a total
    budget's counter lives until it has been unused that long). ``grace``: the counter
    lives that much longer than its window, and a refusal's wait still ends with the
    window: a caller whose clock runs a little behind never finds window N gone (and
    re-created empty) while it still counts as window N.
    """

    key: str
    amount: int
    limit: int | None = None
    ttl: float = 60.0
    kind: Literal["count", "countdown"] = "count"
    refresh: bool = False  # every write renews the TTL (a total budget's counter)
    grace: float = 0.0  # the counter outlives its window by this much (clock drift)


@dataclass(frozen=True)
class Setting:
    """A counter set to ``value`` for ``ttl`` seconds (what a rate-limit header said).

    ``room``: a countdown charge reads it (the room a server reported). False for a
    value only read back (the gateway's last cost of a call): a store may then know that
    no room exists and answer a reservation of countdowns alone without asking.
    """

    key: str
    value: int
    ttl: float
    room: bool = True


@dataclass(frozen=True)
class Outcome:
    """What a reservation did.

    :param refused: the index of the first charge that did not fit (nothing was
        taken), or None when every charge was taken.
    :param value: that counter's value.
    :param retry_in: seconds until that counter's window ends (``inf``: it never will,
        the amount alone is over the limit).
    :param degraded: a store problem the call went on despite (fail-open), for a Notice.
    """

    refused: int | None = None
    value: int = 0
    retry_in: float = 0.0
    degraded: str | None = None


@runtime_checkable
class CounterStore(Protocol):
    """Where rate windows and budget counters live. Every method is one atomic step."""

    async def reserve(self, charges: Sequence[Charge]) -> Outcome:
        """Take every charge, or none and say which did not fit."""
        ...

    async def settle(self, adjust: Sequence[Charge], learned: Sequence[Setting]) -> str | None:
        """Add each ``adjust`` amount (may be negative) to its counter *if it still
        exists* (a window that ended is not re-created), and set each ``learned``
        counter. Returns a degradation message (fail-open) or None."""
        ...

    async def read(self, keys: Sequence[str]) -> list[tuple[int, float] | None]:
        """Each counter's value and seconds left, or None when absent."""
        ...


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
        now = self.clock()
        with self._lock:
            self._sweep(now)
            for index, charge in enumerate(charges):
                entry = self._live(charge.key, now)
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
            for charge in charges:
                entry = self._live(charge.key, now)
                if charge.kind == "countdown":
                    if entry is not None:
                        self._values[charge.key] = (entry[0] - charge.amount, entry[1])
                elif entry is None:
                    self._values[charge.key] = (charge.amount, now + charge.ttl + charge.grace)
                else:
                    until = now + charge.ttl + charge.grace if charge.refresh else entry[1]
                    self._values[charge.key] = (entry[0] + charge.amount, until)
        return Outcome()

    def settle_now(self, adjust: Sequence[Charge], learned: Sequence[Setting]) -> None:
        now = self.clock()
        with self._lock:
            for charge in adjust:
                entry = self._live(charge.key, now)
                if entry is not None:
                    self._values[charge.key] = (max(0, entry[0] + charge.amount), entry[1])
            for setting in learned:
                self._values[setting.key] = (setting.value, now + setting.ttl)

    def read_now(self, keys: Sequence[str]) -> list[tuple[int, float] | None]:
        now = self.clock()
        with self._lock:
            found = [self._live(key, now) for key in keys]
        return [None if e is None else (e[0], e[1] - now) for e in found]

    async def reserve(self, charges: Sequence[Charge]) -> Outcome:
        return self.reserve_now(charges)

    async def settle(self, adjust: Sequence[Charge], learned: Sequence[Setting]) -> str | None:
        self.settle_now(adjust, learned)
        return None

    async def read(self, keys: Sequence[str]) -> list[tuple[int, float] | None]:
        return self.read_now(keys)

    def live_keys(self) -> list[str]:
        """The live counters' keys (for ``modelplug limits``)."""
        now = self.clock()
        with self._lock:
            return sorted(k for k in list(self._values) if self._live(k, now) is not None)

    def reset(self) -> None:
        with self._lock:
            self._values.clear()

    def __repr__(self) -> str:
        return f"MemoryCounters({len(self._values)} counters)"


SHARED = MemoryCounters()
"""The process-wide counters every limits policy uses unless given its own store."""
