"""An SQLite file the processes of one machine share, for state a plugin keeps between
calls and between runs without a server (modelplug-limits' counters, modelplug-fallback's
cooldowns).

- **Owner-only.** The directory is made (or narrowed to) 0700 and the file 0600; SQLite
  gives its ``-wal`` and ``-shm`` files the file's own mode.
- **WAL mode**, so a reader never waits for a writer, and ``synchronous = NORMAL``: a
  commit is a write to the log, not an fsync (a power cut may lose the last moments of
  counting, never the file).
- **One write at a time, atomically.** :meth:`LocalDB.write` runs its work in one
  ``BEGIN IMMEDIATE`` transaction: the file's write lock is taken before the work reads
  what it will change, so two processes never both take the last room.
- **Never stalls an event loop.** A transaction takes tens of microseconds, so it runs on
  the calling thread (a hop to a worker thread costs more than the work). Only waiting
  for another process's lock could take long: SQLite is asked not to wait itself, and
  :meth:`LocalDB.write` waits with ``asyncio.sleep`` between tries (:meth:`write_now`,
  for synchronous callers, with ``time.sleep``), up to ``busy_timeout`` seconds.
- **Fork-safe.** A process that inherited the connection through ``fork`` opens its own.

Errors are ``sqlite3.Error`` or ``OSError`` (a file that cannot be made or read, a lock
held past ``busy_timeout``); what to do then (count in memory, say so) is the caller's.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

__all__ = ["LocalDB"]

T = TypeVar("T")

FIRST_WAIT = 0.0005  # seconds before trying a locked file again; doubles per try
LONGEST_WAIT = 0.02


class LocalDB:
    """One SQLite file, opened on first use.

    :param path: the file (its directory is made owner-only if need be).
    :param schema: SQL run once per connection (``CREATE TABLE IF NOT EXISTS ...``).
    :param busy_timeout: seconds to wait for another process's write lock before giving
        up with ``sqlite3.OperationalError`` ("database is locked").
    """

    def __init__(self, path: Path, schema: str, *, busy_timeout: float = 5.0) -> None:
        self.path = path
        self.schema = schema
        self.busy_timeout = busy_timeout
        self._lock = threading.Lock()  # one connection, used by one thread at a time
        self._db: sqlite3.Connection | None = None
        self._pid = 0

    def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(connection)`` outside a write transaction (WAL: it sees the last
        commit and never waits for a writer)."""
        return self._retrying(lambda: self._once(work, write=False))

    def write_now(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(connection)`` in one ``BEGIN IMMEDIATE`` transaction, committed when it
        returns, rolled back when it raises; waits for the lock with ``time.sleep``."""
        return self._retrying(lambda: self._once(work, write=True))

    async def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """:meth:`write_now` for a coroutine: waits for the lock with ``asyncio.sleep``,
        so the event loop goes on while another process writes."""
        wait, deadline = FIRST_WAIT, None
        while True:
            try:
                return self._once(work, write=True)
            except sqlite3.OperationalError as exc:
                deadline = self._busy(exc, deadline)
            await asyncio.sleep(wait)
            wait = min(wait * 2, LONGEST_WAIT)

    def close(self) -> None:
        with self._lock:
            if self._db is not None and self._pid == os.getpid():
                self._db.close()
            self._db = None

    def _retrying(self, attempt: Callable[[], T]) -> T:
        wait, deadline = FIRST_WAIT, None
        while True:
            try:
                return attempt()
            except sqlite3.OperationalError as exc:
                deadline = self._busy(exc, deadline)
            time.sleep(wait)
            wait = min(wait * 2, LONGEST_WAIT)

    def _busy(self, exc: sqlite3.OperationalError, deadline: float | None) -> float:
        """The deadline for waiting on another process's lock; re-raises ``exc`` when it
        is not about the lock, or when the deadline has passed."""
        if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY:
            raise exc
        now = time.monotonic()
        if deadline is None:
            return now + self.busy_timeout
        if now >= deadline:
            raise exc
        return deadline

    def _once(self, work: Callable[[sqlite3.Connection], T], *, write: bool) -> T:
        with self._lock:
            db = self._connection()
            if not write:
                return work(db)
            db.execute("BEGIN IMMEDIATE")
            try:
                result = work(db)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            return result

    def _connection(self) -> sqlite3.Connection:
        if self._db is not None and self._pid == os.getpid():
            return self._db
        self._db = None  # inherited through fork: the parent's, not ours to use
        db = _open(self.path)
        try:
            # Setting WAL (once per file) and the schema may meet another process's lock:
            # the caller's retry covers it, as for any write.
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.executescript(self.schema)
        except BaseException:
            db.close()
            raise
        self._db, self._pid = db, os.getpid()
        return db

    def __repr__(self) -> str:
        return f"LocalDB({str(self.path)!r})"


def _open(path: Path) -> sqlite3.Connection:
    directory = path.parent
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    # mkdir's mode is cut by the umask and ignored for a directory that exists already.
    if directory.stat().st_mode & 0o077:
        directory.chmod(0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.chmod(path, 0o600)  # a file made by something else, with a wider mode
    finally:
        os.close(fd)
    # timeout=0: SQLite does not wait for a lock itself (it would sleep on the caller's
    # thread, an event loop's); LocalDB waits between tries instead.
    return sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
