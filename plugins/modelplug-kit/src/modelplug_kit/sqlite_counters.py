"""Counters in an SQLite file that every process on this machine shares: the default
store of the policies that count (modelplug-limits' budgets and rate windows,
modelplug-router's deployments) when no Redis is set, so a daily budget, an rpm limit or
a deployment's in-flight count holds across CLI runs and worker processes on one machine.

The file is the kit's :class:`~modelplug_kit.LocalDB` (owner-only, WAL). A reservation
is one ``BEGIN IMMEDIATE`` transaction: it takes the file's write lock, then reads and
checks every charge, then writes all of them or none, so two processes never both take
the last room. A settlement is another. Expiry times are absolute seconds on the store's
clock (the wall clock by default: processes and reboots agree on it); the interface
stays relative, as :class:`~modelplug_kit.CounterStore` says.

When the file cannot be used (a read-only disk, a lock held past the busy timeout), the
store counts in this process's memory and says so, as the Redis store does when Redis is
down: a call is never refused because its bookkeeping failed.
"""

from __future__ import annotations

import math
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from modelplug import ModelplugError

from modelplug_kit.local_db import LocalDB
from modelplug_kit.memory_stores import MemoryCounters
from modelplug_kit.stores import Charge, Outcome, Setting

__all__ = ["SqliteCounters"]

SWEEP_EVERY = 60.0  # seconds between sweeps of ended counters
RETRY_FILE_AFTER = 5.0  # seconds in memory after the file failed, before trying it again

SCHEMA = """
CREATE TABLE IF NOT EXISTS counters (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL,
    expires REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS counters_expires ON counters (expires);
"""

# One statement per charge: a counter that ended (its row not yet swept) starts again.
TAKE = """
INSERT INTO counters (key, value, expires) VALUES (:key, :amount, :until)
ON CONFLICT (key) DO UPDATE SET
    value = CASE WHEN expires > :now THEN value + :amount ELSE :amount END,
    expires = CASE WHEN expires > :now AND NOT :refresh THEN expires ELSE :until END
"""
COUNT_DOWN = "UPDATE counters SET value = value - ? WHERE key = ? AND expires > ?"
ADJUST = "UPDATE counters SET value = max(0, value + ?) WHERE key = ? AND expires > ?"
SET = """
INSERT INTO counters (key, value, expires) VALUES (?, ?, ?)
ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires = excluded.expires
"""

Problems = (sqlite3.Error, OSError)


class SqliteCounters:
    """:class:`~modelplug_kit.CounterStore` in an SQLite file.

    :param path: the file (each policy names its own in ``client.settings.data_dir()``,
        e.g. ``limits.sqlite3``; its directory is made owner-only).
    :param clock: seconds since the epoch (inject a fake one in tests). Every process
        sharing the file must read the same clock: the wall clock does.
    :param busy_timeout: seconds to wait for another process's transaction before
        counting this call in memory instead.
    """

    def __init__(
        self, path: Path, *, clock: Callable[[], float] = time.time, busy_timeout: float = 5.0
    ) -> None:
        self.path = path
        self.clock = clock
        self.db = LocalDB(path, SCHEMA, busy_timeout=busy_timeout)
        self.local = MemoryCounters(clock=clock)  # while the file cannot be used
        self._sweep_at = 0.0
        self._file_down_until = -math.inf

    # -- the transactions (each runs inside one BEGIN IMMEDIATE) ---------------------

    def _reserve(self, db: sqlite3.Connection, charges: Sequence[Charge]) -> Outcome:
        now = self.clock()
        if now >= self._sweep_at:
            # Window counters are named per window, so an ended one is never read again.
            db.execute("DELETE FROM counters WHERE expires <= ?", (now,))
            self._sweep_at = now + SWEEP_EVERY
        refused = _check(charges, _live(db, [c.key for c in charges], now), now)
        if refused is not None:
            return refused
        for charge in charges:
            if charge.kind == "countdown":
                db.execute(COUNT_DOWN, (charge.amount, charge.key, now))
                continue
            db.execute(
                TAKE,
                {
                    "key": charge.key,
                    "amount": charge.amount,
                    "until": now + charge.ttl + charge.grace,
                    "now": now,
                    "refresh": charge.refresh,
                },
            )
        return Outcome()

    def _countdowns(self, charges: Sequence[Charge]) -> Outcome | None:
        """The outcome of countdown-only charges when no write is needed (none of their
        counters is live, or one refuses); None when some must be counted down."""
        if not self.path.exists():
            return Outcome()  # made by the first write; nothing was reported yet
        now = self.clock()
        live = self.db.read(lambda db: _live(db, [c.key for c in charges], now))
        refused = _check(charges, live, now)
        if refused is not None or not live:
            return refused or Outcome()
        return None

    def _settle(
        self, db: sqlite3.Connection, adjust: Sequence[Charge], learned: Sequence[Setting]
    ) -> None:
        now = self.clock()
        db.executemany(ADJUST, [(c.amount, c.key, now) for c in adjust])
        db.executemany(SET, [(s.key, s.value, now + s.ttl) for s in learned])

    # -- CounterStore --------------------------------------------------------------

    async def reserve(self, charges: Sequence[Charge]) -> Outcome:
        """Take every charge, or none and say which did not fit (one ``BEGIN IMMEDIATE``
        transaction); in this process's memory, saying so, when the file fails."""
        if self._file_usable():
            try:
                if all(c.kind == "countdown" for c in charges):
                    # No limit is set, only a server's reported room may count: a read
                    # (which never waits) finds none, most of the time.
                    found = self._countdowns(charges)
                    if found is not None:
                        return found
                return await self.db.write(lambda db: self._reserve(db, charges))
            except Problems as exc:
                said = self._failed(exc)
        else:
            said = self._problem("failed lately")
        outcome = self.local.reserve_now(charges)
        return Outcome(outcome.refused, outcome.value, outcome.retry_in, said)

    async def settle(self, adjust: Sequence[Charge], learned: Sequence[Setting]) -> str | None:
        """Add each ``adjust`` amount to its counter if it still exists, set each
        ``learned`` one; a degradation message when the file failed, else None."""
        if not adjust and not learned:
            return None
        if self._file_usable():
            try:
                await self.db.write(lambda db: self._settle(db, adjust, learned))
                return None
            except Problems as exc:
                said = self._failed(exc)
        else:
            said = self._problem("failed lately")
        self.local.settle_now(adjust, learned)
        return said

    async def read(self, keys: Sequence[str]) -> list[tuple[int, float] | None]:
        """Each counter's value and seconds left. A policy reads on a call's path (the
        router, to pick a deployment), so a file that cannot be read answers from this
        process's memory, as :meth:`reserve` counts there: never a failed call."""
        try:
            return self.read_now(keys)
        except ModelplugError:
            return self.local.read_now(keys)

    # -- for plain code: tests, ``modelplug limits`` and ``modelplug resolve`` -------

    def reserve_now(self, charges: Sequence[Charge]) -> Outcome:
        """:meth:`reserve` for plain code (no event loop); the file's errors raise."""
        return self.db.write_now(lambda db: self._reserve(db, charges))

    def settle_now(self, adjust: Sequence[Charge], learned: Sequence[Setting]) -> None:
        """:meth:`settle` for plain code (no event loop); the file's errors raise."""
        self.db.write_now(lambda db: self._settle(db, adjust, learned))

    def read_now(self, keys: Sequence[str]) -> list[tuple[int, float] | None]:
        """Each counter's value and seconds left, or None when absent.

        :raises ModelplugError: the file cannot be read (naming it and why).
        """
        now = self.clock()
        try:
            live = self.db.read(lambda db: _live(db, keys, now))
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise ModelplugError(self._problem(_why(exc), counting=False)) from None
            live = {}  # another process is making the file's tables: nothing counted yet
        except Problems as exc:
            raise ModelplugError(self._problem(_why(exc), counting=False)) from None
        found = [live.get(key) for key in keys]
        return [None if e is None else (e[0], e[1] - now) for e in found]

    def live_keys(self) -> list[str]:
        """The live counters' keys, sorted (for ``modelplug limits``)."""
        now = self.clock()
        rows = self.db.read(
            lambda db: db.execute(
                "SELECT key FROM counters WHERE expires > ? ORDER BY key", (now,)
            ).fetchall()
        )
        return [str(row[0]) for row in rows]

    # -- when the file fails ---------------------------------------------------------

    def _file_usable(self) -> bool:
        return self.clock() >= self._file_down_until

    def _failed(self, exc: BaseException) -> str:
        self._file_down_until = self.clock() + RETRY_FILE_AFTER
        return self._problem(_why(exc))

    def _problem(self, why: str, *, counting: bool = True) -> str:
        then = "; counting in this process's memory until it works again" if counting else ""
        return f"modelplug: the counters file {self.path} cannot be used ({why}){then}"

    def close(self) -> None:
        """Close this process's connections to the file; the next use opens them again."""
        self.db.close()

    def __repr__(self) -> str:
        return f"SqliteCounters({str(self.path)!r})"


def _live(db: sqlite3.Connection, keys: Sequence[str], now: float) -> dict[str, tuple[int, float]]:
    """The live counters among ``keys``: key -> (value, expires at)."""
    unique = list(dict.fromkeys(keys))
    if not unique:
        return {}
    marks = ",".join("?" * len(unique))
    rows = db.execute(
        f"SELECT key, value, expires FROM counters WHERE key IN ({marks}) AND expires > ?",
        (*unique, now),
    ).fetchall()
    return {str(k): (int(v), float(e)) for k, v, e in rows}


def _check(
    charges: Sequence[Charge], live: dict[str, tuple[int, float]], now: float
) -> Outcome | None:
    """The first charge that does not fit (as MemoryCounters decides), or None."""
    for index, charge in enumerate(charges):
        entry = live.get(charge.key)
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
    return None


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"
