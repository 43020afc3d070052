"""When the first call through a deadline route was: this Client's, or the one a shared
store recorded (every process using that store then switches at the same moment)."""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from modelplug import CallContext
    from modelplug_kit import CounterStore

__all__ = ["FirstCalls"]

KEY = "modelplug-deadline:first-call:{name}"


class FirstCalls:
    """The first call per Client and deadline name; with ``store`` (or the deadline's
    ``store`` setting), the first recorded in it (a :class:`modelplug_kit.CounterStore`:
    the kit's ``SqliteCounters`` for this machine's processes, modelplug-redis's for
    every machine).

    The shared record lives until the switch (``lasts`` seconds): a process whose first
    call comes later begins a new period, while one that already called keeps its own.
    """

    def __init__(self, store: CounterStore | None = None) -> None:
        self.store = store
        self._seen: weakref.WeakKeyDictionary[CallContext, dict[str, float]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    async def first(
        self,
        client: CallContext,
        name: str,
        now: float,
        lasts: float,
        store: CounterStore | None = None,
    ) -> float:
        """The first call through ``name``; ``now`` when this is the first. ``store``
        (the deadline's own setting) records it when this object was given none."""
        with self._lock:
            known = self._seen.get(client, {}).get(name)
        if known is not None:
            return known
        shared = self.store if self.store is not None else store
        first = now if shared is None else await _recorded(shared, name, now, lasts)
        with self._lock:
            return self._seen.setdefault(client, {}).setdefault(name, first)


async def _recorded(store: CounterStore, name: str, now: float, lasts: float) -> float:
    """Record ``now`` in ``store`` unless a first call is recorded already; the one
    recorded. A counter that only a first write fits: its value is the time, its limit
    too."""
    from modelplug_kit import Charge

    moment = int(now)
    charge = Charge(key=KEY.format(name=name), amount=moment, limit=moment, ttl=lasts)
    outcome = await store.reserve([charge])
    if outcome.refused is None or outcome.value <= 0:
        return now
    return float(outcome.value)
