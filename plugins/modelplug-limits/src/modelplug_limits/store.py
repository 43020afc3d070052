"""The process's counters: the one store the rate windows and the budgets share when
``[limits] store = "memory"``.

A reservation is a list of ``Charge`` objects applied all or nothing, in one atomic
step, so two callers (tasks, threads, processes through modelplug-redis) never both take
the last room. Amounts are whole numbers: requests, tokens, and money in nano-units of
its currency (the kit's ``to_nano``). The records, the ``CounterStore``
protocol and ``MemoryCounters`` are the kit's (:mod:`modelplug_kit.stores`), so a store
kept elsewhere (modelplug-redis) needs only the kit.
"""

from __future__ import annotations

from modelplug_kit import MemoryCounters

__all__ = ["SHARED"]

SHARED = MemoryCounters()
"""The process-wide counters every limits policy uses unless given its own store."""
