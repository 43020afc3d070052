"""The SQLite counters (the default store without Redis) keep the CounterStore contract:
all or none, never past a limit across threads and tasks, windows that end, countdowns;
in an owner-only file; and when the file cannot be used, a call goes on counted in
memory and says so."""

from __future__ import annotations

import asyncio
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from modelplug import ModelplugError
from modelplug.contract.types import Notice
from modelplug.testing import FakeModel, text
from modelplug_kit import Charge, Setting
from modelplug_limits import LimitsPolicy, SqliteCounters


@pytest.fixture
def store(tmp_path: Path, clock: Any) -> SqliteCounters:
    return SqliteCounters(tmp_path / "data" / "limits.sqlite3", clock=clock)


def test_a_reservation_takes_every_charge_or_none(store: SqliteCounters) -> None:
    store.reserve_now([Charge("b", 9, 10)])

    outcome = store.reserve_now([Charge("a", 1, 10), Charge("b", 2, 10)])

    assert outcome.refused == 1 and outcome.value == 9
    assert store.read_now(["a", "b"])[0] is None  # "a" was not taken either
    assert store.read_now(["b"])[0] == (9, 60.0)


def test_a_refusal_says_when_the_window_has_room(store: SqliteCounters, clock: Any) -> None:
    store.reserve_now([Charge("w", 2, 2, ttl=30.0, grace=1.0)])
    clock.now += 10

    outcome = store.reserve_now([Charge("w", 1, 2, ttl=20.0, grace=1.0)])

    assert outcome.refused == 0 and outcome.retry_in == 20.0  # the window, not the grace
    assert store.reserve_now([Charge("big", 3, 2)]).retry_in == float("inf")


def test_threads_never_take_more_than_the_limit(store: SqliteCounters) -> None:
    taken: list[bool] = []

    def worker() -> None:
        for _ in range(50):
            taken.append(store.reserve_now([Charge("k", 1, 120)]).refused is None)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sum(taken) == 120
    assert store.read_now(["k"])[0] == (120, 60.0)


def test_tasks_never_take_more_than_the_limit(store: SqliteCounters) -> None:
    async def main() -> int:
        outcomes = await asyncio.gather(*(store.reserve([Charge("k", 3, 100)]) for _ in range(50)))
        return sum(o.refused is None for o in outcomes)

    assert asyncio.run(main()) == 33


def test_a_window_ends_and_a_settlement_never_recreates_it(
    store: SqliteCounters, clock: Any
) -> None:
    store.reserve_now([Charge("w", 5, 10, ttl=1.0)])
    clock.now += 2

    store.settle_now([Charge("w", -3)], [])

    assert store.read_now(["w"]) == [None]
    # An ended counter starts again from the new charge, not from what it held.
    store.reserve_now([Charge("w", 4, 10, ttl=1.0)])
    assert store.read_now(["w"])[0] == (4, 1.0)


def test_a_settlement_adjusts_and_never_goes_below_zero(store: SqliteCounters) -> None:
    store.reserve_now([Charge("t", 1000, 5000)])

    store.settle_now([Charge("t", -980)], [])
    assert store.read_now(["t"])[0][0] == 20  # type: ignore[index]
    store.settle_now([Charge("t", -50)], [])
    assert store.read_now(["t"])[0][0] == 0  # type: ignore[index]


def test_a_total_budget_s_counter_is_renewed_by_every_charge(
    store: SqliteCounters, clock: Any
) -> None:
    store.reserve_now([Charge("total", 1, 10, ttl=100.0, refresh=True)])
    clock.now += 90

    store.reserve_now([Charge("total", 1, 10, ttl=100.0, refresh=True)])

    assert store.read_now(["total"])[0] == (2, 100.0)


def test_a_countdown_holds_only_while_it_exists(store: SqliteCounters) -> None:
    assert store.reserve_now([Charge("c", 1, kind="countdown")]).refused is None
    store.settle_now([], [Setting("c", 1, 5.0)])

    assert store.reserve_now([Charge("c", 1, kind="countdown")]).refused is None
    refused = store.reserve_now([Charge("c", 1, kind="countdown")])
    assert refused.refused == 0 and refused.retry_in == 5.0


def test_ended_counters_are_swept(store: SqliteCounters, clock: Any) -> None:
    store.reserve_now([Charge(f"rate:w:{i}", 1, 10, ttl=1.0) for i in range(20)])
    clock.now += 120  # past every window and the sweep interval

    store.reserve_now([Charge("now", 1, 10)])

    rows = store.db.read(lambda db: db.execute("SELECT key FROM counters").fetchall())
    assert [row[0] for row in rows] == ["now"]


def test_the_file_and_its_directory_are_the_owner_s_alone(store: SqliteCounters) -> None:
    store.reserve_now([Charge("k", 1, 10)])

    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    for suffix in ("", "-wal", "-shm"):
        path = Path(f"{store.path}{suffix}")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name


def test_modelplug_stream_counts_in_memory_and_says_so_when_the_file_cannot_be_used(
    make_client: Any, tmp_path: Path, clock: Any
) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the store's directory should be")
    store = SqliteCounters(blocked / "limits.sqlite3", clock=clock)
    policy = LimitsPolicy({"fake/m": {"rpm": 1}, "max_wait": 0}, store=store, clock=clock)
    client = make_client(policy, FakeModel([text("counted in memory"), text("never")]))
    seen: list[Any] = []

    answer = client.complete("fake/m", "hi", on_event=seen.append)

    assert answer.text == "counted in memory"
    (said,) = [e for e in seen if isinstance(e, Notice)]
    assert said.kind == "limits" and said.details["phase"] == "store_degraded"
    assert str(blocked / "limits.sqlite3") in said.message
    assert "counting in this process's memory until it works again" in said.message
    # The rpm still holds, in memory, while the file cannot be used.
    with pytest.raises(ModelplugError, match="request rate of fake/m"):
        client.complete("fake/m", "hi")
    with pytest.raises(ModelplugError, match="cannot be used"):
        store.read_now(["anything"])


def test_a_call_with_no_limit_set_neither_makes_the_file_nor_waits_for_it(
    store: SqliteCounters,
) -> None:
    # What every call reserves when no limit is set: the room a server reported last.
    learned = [Charge("learned:r", 1, kind="countdown"), Charge("learned:t", 500, kind="countdown")]

    assert asyncio.run(store.reserve(learned)).refused is None
    assert not store.path.exists()

    store.settle_now([], [Setting("learned:t", 600, 30.0)])  # a server said: 600 tokens left
    assert asyncio.run(store.reserve(learned)).refused is None  # counted down to 100
    assert store.read_now(["learned:t"])[0] == (100, 30.0)
    refused = asyncio.run(store.reserve(learned))
    assert refused.refused == 1 and refused.value == 100 and refused.retry_in == 30.0
