"""modelplug_close: closing a client closes the first calls' SQLite file a deadline with
``store = "sqlite"`` opened; the next call through the deadline opens it again and finds
the first call still recorded."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import modelplug_deadline
from modelplug_deadline import DeadlinePolicy
from modelplug_deadline.policy import FILE_NAME
from modelplug_deadline.table import deadline_named
from modelplug_kit import SqliteCounters, choose_counter_store


class Fixed:
    def __init__(self, now: float) -> None:
        self.at = now

    def now(self) -> float:
        return self.at

    async def sleep_until(self, moment: float) -> None:
        raise AssertionError("nothing waits here")


def test_modelplug_close_closes_the_first_calls_file(
    make_client: Any, modelplug_config_dir: Path
) -> None:
    (modelplug_config_dir / "config.toml").write_text(
        '[deadlines.nightly]\nslow = "echo/a"\nfast = "echo/b"\nswitch_after = "1h"\n'
        'store = "sqlite"\n'
    )
    clock = Fixed(1000.0)
    policy = DeadlinePolicy(clock=clock)
    client = make_client(policy)
    deadline = deadline_named(client.settings, "nightly")
    assert deadline is not None and deadline.store == "sqlite"
    assert asyncio.run(policy.switch_time(client, deadline)) == 1000 + 3600
    store = choose_counter_store(client, "sqlite", file_name=FILE_NAME, setting="test")
    assert isinstance(store, SqliteCounters)
    assert store.path == client.settings.data_dir() / "deadline.sqlite3"
    assert store.db._writer is not None  # the first call was recorded in the file
    modelplug_deadline.modelplug_close(client)
    assert store.db._writer is None and store.db._reader is None
    # Another client of this process, later: the record is read from the file again.
    clock.at = 2000.0
    other = make_client(DeadlinePolicy(clock=clock))
    again = asyncio.run(DeadlinePolicy(clock=clock).switch_time(other, deadline))
    assert again == 1000 + 3600
