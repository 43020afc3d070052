"""SqliteCounters.read, which a policy calls on a call's path (the router picks a
deployment by it): a file whose tables another process is still making holds nothing
yet, and a file that cannot be read answers from this process's memory, never an error."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from modelplug import ModelplugError
from modelplug_kit import Charge, SqliteCounters


def test_a_file_whose_tables_are_being_made_reads_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "data" / "c.sqlite3"
    path.parent.mkdir()
    other = sqlite3.connect(path, isolation_level=None)  # another process, mid-schema
    other.execute("PRAGMA journal_mode = WAL")
    other.execute("BEGIN IMMEDIATE")
    try:
        store = SqliteCounters(path, busy_timeout=0.05)
        assert asyncio.run(store.read(["a", "b"])) == [None, None]
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_an_unreadable_file_reads_from_memory(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    path = blocked / "c.sqlite3"
    path.mkdir()  # a directory where the file should be: it cannot be opened
    store = SqliteCounters(path)
    with pytest.raises(ModelplugError, match="cannot be used"):
        store.read_now(["a"])  # plain code (modelplug limits) hears why

    async def counted() -> list[tuple[int, float] | None]:
        outcome = await store.reserve([Charge(key="a", amount=2, limit=5, ttl=60)])
        assert outcome.refused is None
        return await store.read(["a", "b"])

    found = asyncio.run(counted())
    assert found[1] is None and found[0] is not None and found[0][0] == 2
