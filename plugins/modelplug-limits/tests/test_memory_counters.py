"""The in-memory counters are all-or-nothing and safe across threads and tasks."""

from __future__ import annotations

import asyncio
import threading

from modelplug_kit import Charge, MemoryCounters, Setting


def test_a_reservation_takes_every_charge_or_none() -> None:
    store = MemoryCounters()
    store.reserve_now([Charge("b", 9, 10)])

    outcome = store.reserve_now([Charge("a", 1, 10), Charge("b", 2, 10)])

    assert outcome.refused == 1 and outcome.value == 9
    assert store.read_now(["a", "b"])[0] is None  # "a" was not taken either


def test_threads_never_take_more_than_the_limit() -> None:
    store = MemoryCounters()
    taken: list[bool] = []

    def worker() -> None:
        for _ in range(100):
            taken.append(store.reserve_now([Charge("k", 1, 250)]).refused is None)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sum(taken) == 250
    assert store.read_now(["k"])[0][0] == 250


def test_tasks_never_take_more_than_the_limit() -> None:
    store = MemoryCounters()

    async def main() -> int:
        outcomes = await asyncio.gather(*(store.reserve([Charge("k", 3, 100)]) for _ in range(50)))
        return sum(o.refused is None for o in outcomes)

    assert asyncio.run(main()) == 33


def test_a_window_ends_and_a_settlement_never_recreates_it() -> None:
    now = [100.0]
    store = MemoryCounters(clock=lambda: now[0])
    store.reserve_now([Charge("w", 5, 10, ttl=1.0)])
    now[0] += 2

    store.settle_now([Charge("w", -3)], [])

    assert store.read_now(["w"]) == [None]


def test_a_countdown_holds_only_while_it_exists() -> None:
    now = [0.0]
    store = MemoryCounters(clock=lambda: now[0])
    assert store.reserve_now([Charge("c", 1, kind="countdown")]).refused is None
    store.settle_now([], [Setting("c", 1, 5.0)])

    assert store.reserve_now([Charge("c", 1, kind="countdown")]).refused is None
    refused = store.reserve_now([Charge("c", 1, kind="countdown")])
    assert refused.refused == 0 and refused.retry_in == 5.0
