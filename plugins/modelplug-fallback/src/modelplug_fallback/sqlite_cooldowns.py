"""The cooldown table in an SQLite file every process on this machine shares: the default
when no Redis is set, so a model one process found rate limited is skipped by the next
process too (a second CLI run, another worker).

The file is the kit's :class:`~modelplug_kit.LocalDB` (owner-only, WAL): a read never
waits, a mark is one ``BEGIN IMMEDIATE`` transaction that never shortens a longer
cooldown. Times in the file are absolute seconds on the store's clock (the wall clock by
default, which processes and reboots agree on); the interface stays relative.

When the file cannot be used, the store answers from this process's memory and warns
once, as the Redis store does when Redis is down.
"""

from __future__ import annotations

import math
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from modelplug import warn
from modelplug_kit import LocalDB, MemoryCooldowns

__all__ = ["FILE_NAME", "SqliteCooldowns"]

FILE_NAME = "cooldowns.sqlite3"
RETRY_FILE_AFTER = 5.0  # seconds in memory after the file failed, before trying it again

SCHEMA = """
CREATE TABLE IF NOT EXISTS cooldowns (
    key TEXT PRIMARY KEY,
    until REAL NOT NULL
) WITHOUT ROWID;
"""
MARK = """
INSERT INTO cooldowns (key, until) VALUES (?, ?)
ON CONFLICT (key) DO UPDATE SET until = max(until, excluded.until)
"""
UNTIL = "SELECT until FROM cooldowns WHERE key = ?"
FORGET = "DELETE FROM cooldowns WHERE key = ?"

Problems = (sqlite3.Error, OSError)


class SqliteCooldowns:
    """:class:`~modelplug_fallback.AsyncCooldownStore` in an SQLite file.

    :param path: the file (``cooldowns.sqlite3`` in ``client.settings.data_dir()`` by
        default; its directory is made owner-only).
    :param clock: seconds since the epoch (inject a fake one in tests); every process
        sharing the file must read the same clock, as the wall clock is.
    :param busy_timeout: seconds to wait for another process's write before answering
        from memory.
    """

    def __init__(
        self, path: Path, *, clock: Callable[[], float] = time.time, busy_timeout: float = 5.0
    ) -> None:
        self.path = path
        self.clock = clock
        self.db = LocalDB(path, SCHEMA, busy_timeout=busy_timeout)
        self.local = MemoryCooldowns(clock=clock)  # while the file cannot be used
        self._file_down_until = -math.inf
        self._warned = False

    # -- AsyncCooldownStore ------------------------------------------------------------

    async def mark(self, key: str, seconds: float) -> None:
        self.local.mark(key, seconds)
        if self._file_usable():
            until = self.clock() + seconds
            try:
                await self.db.write(lambda db: self._mark(db, key, until))
            except Problems as exc:
                self._failed(exc)

    async def remaining(self, key: str) -> float:
        return self.remaining_now(key)

    async def clear(self, key: str) -> None:
        self.local.clear(key)
        if self._file_usable():
            try:
                await self.db.write(
                    lambda db: db.execute("DELETE FROM cooldowns WHERE key = ?", (key,))
                )
            except Problems as exc:
                self._failed(exc)

    # -- for plain code: tests and ``modelplug resolve`` ------------------------------

    def remaining_now(self, key: str) -> float:
        """Seconds ``key`` still cools down (0: free). A read: it never waits."""
        if not self._file_usable():
            return self.local.remaining(key)
        if not self.path.exists():
            return 0.0  # made by the first mark: nothing cooled down yet
        try:
            row = self.db.read(
                lambda db: db.execute(
                    "SELECT until FROM cooldowns WHERE key = ?", (key,)
                ).fetchone()
            )
        except Problems as exc:
            self._failed(exc)
            return self.local.remaining(key)
        self._warned = False
        return 0.0 if row is None else max(0.0, float(row[0]) - self.clock())

    def mark_now(self, key: str, seconds: float) -> None:
        until = self.clock() + seconds
        self.db.write_now(lambda db: self._mark(db, key, until))

    def cooling(self) -> dict[str, float]:
        """Every model cooling down now, and for how many more seconds."""
        if not self.path.exists():
            return {}
        now = self.clock()
        rows = self.db.read(
            lambda db: db.execute(
                "SELECT key, until FROM cooldowns WHERE until > ? ORDER BY key", (now,)
            ).fetchall()
        )
        return {str(key): float(until) - now for key, until in rows}

    def _mark(self, db: sqlite3.Connection, key: str, until: float) -> None:
        # Ended cooldowns are never read again: the table holds only what cools now.
        db.execute("DELETE FROM cooldowns WHERE until <= ?", (self.clock(),))
        db.execute(MARK, (key, until))

    # -- when the file fails -------------------------------------------------------------

    def _file_usable(self) -> bool:
        return self.clock() >= self._file_down_until

    def _failed(self, exc: BaseException) -> None:
        self._file_down_until = self.clock() + RETRY_FILE_AFTER
        if not self._warned:
            warn(
                f"modelplug-fallback: the cooldowns file {self.path} cannot be used "
                f"({type(exc).__name__}: {exc}); keeping cooldowns in this process's memory "
                "until it works again"
            )
            self._warned = True

    def close(self) -> None:
        """Close this process's connections to the file; the next use opens them again."""
        self.db.close()

    def __repr__(self) -> str:
        return f"SqliteCooldowns({str(self.path)!r})"
