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
- **Never stalls an event loop.** A transaction takes tens of microseconds, so
  :meth:`LocalDB.write` runs it on the loop's own thread (a hop to a worker thread costs
  more than the work). Only waiting could take long, so SQLite is told never to wait
  itself (its own wait sleeps 1, 2, 5, 10... ms on the caller's thread): when another
  process or thread is writing, ``write`` tries again after ``asyncio.sleep`` (0.2 ms,
  doubling to 4 ms) until ``busy_timeout``, and the loop goes on meanwhile. The writers
  of one loop take turns, first come first served, so one of them at a time asks the
  file. Reads have a connection of their own and never wait for a writer (WAL).
- **Fork-safe.** A process that inherited the connections through ``fork`` opens its own.

Errors are ``sqlite3.Error`` or ``OSError`` (a file that cannot be made or read, a lock
held past ``busy_timeout``); what to do then (count in memory, say so) is the caller's.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

__all__ = ["LocalDB"]

T = TypeVar("T")

READ_WAIT = 0.1  # seconds a read may wait: only a crashed writer's recovery makes one
FIRST_WAIT = 0.0002  # seconds before trying a locked file again; doubles per try...
LONGEST_WAIT = 0.004  # ...up to this: a transaction is tens of microseconds


class LocalDB:
    """One SQLite file, opened on first use.

    :param path: the file (its directory is made owner-only if need be).
    :param schema: SQL run once per process (``CREATE TABLE IF NOT EXISTS ...``).
    :param busy_timeout: seconds to wait for another process's write before giving up
        with ``sqlite3.OperationalError`` ("database is locked").
    """

    def __init__(self, path: Path, schema: str, *, busy_timeout: float = 5.0) -> None:
        self.path = path
        self.schema = schema
        self.busy_timeout = busy_timeout
        # One connection each, each used by one thread at a time.
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._reader: sqlite3.Connection | None = None
        self._turns_lock = threading.Lock()
        self._turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._pid = os.getpid()

    def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(connection)`` on the reading connection: it sees the last commit and
        does not wait for a writer (WAL)."""
        with self._read_lock:
            return work(self._reading())

    def write_now(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(connection)`` in one ``BEGIN IMMEDIATE`` transaction, committed when it
        returns, rolled back when it raises; waits on this thread for the lock."""
        wait, deadline = FIRST_WAIT, time.monotonic() + self.busy_timeout
        while True:
            with self._write_lock:
                try:
                    return self._transaction(work)
                except sqlite3.OperationalError as exc:
                    _raise_unless_busy(exc, deadline)
            time.sleep(wait)
            wait = min(wait * 2, LONGEST_WAIT)

    async def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """:meth:`write_now` for a coroutine: each try runs on the loop's thread (it is
        short); between tries the loop goes on (``asyncio.sleep``). The writers of one
        loop take turns, first come first served, so only one of them asks the file."""
        deadline = time.monotonic() + self.busy_timeout
        turn = self._turn()
        if not turn.locked():
            done = self._try(work, deadline)
            if done:
                return done[0]
        async with turn:
            wait = FIRST_WAIT
            while True:
                done = self._try(work, deadline)
                if done:
                    return done[0]
                await asyncio.sleep(wait)
                wait = min(wait * 2, LONGEST_WAIT)

    def _try(self, work: Callable[[sqlite3.Connection], T], deadline: float) -> list[T]:
        """One try at ``work`` without waiting: ``[its result]``, or ``[]`` when another
        thread or process is writing."""
        # Another thread's transaction is as busy as another process's: never wait for
        # this lock on the loop's thread.
        if not self._write_lock.acquire(blocking=False):
            if time.monotonic() >= deadline:
                raise sqlite3.OperationalError("database is locked (by another thread)")
            return []
        try:
            return [self._transaction(work)]
        except sqlite3.OperationalError as exc:
            _raise_unless_busy(exc, deadline)
            return []
        finally:
            self._write_lock.release()

    def _turn(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._turns_lock:
            turn = self._turns.get(loop)
            if turn is None:
                turn = self._turns[loop] = asyncio.Lock()
        return turn

    def close(self) -> None:
        """Close the database connection of this process."""
        with self._write_lock, self._read_lock:
            if self._pid == os.getpid():
                for db in (self._writer, self._reader):
                    if db is not None:
                        db.close()
            self._writer = self._reader = None

    def _transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        db = self._writing()
        db.execute("BEGIN IMMEDIATE")
        try:
            result = work(db)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return result

    def _writing(self) -> sqlite3.Connection:
        """The writing connection (under the write lock), made with the file, WAL and
        the schema on first use."""
        self._forked()
        if self._writer is None:
            db = _open(self.path)
            try:
                db.execute("PRAGMA journal_mode = WAL")  # once per file; it persists
                db.execute("PRAGMA synchronous = NORMAL")  # per connection: no fsync per commit
                db.executescript(self.schema)
            except BaseException:
                db.close()
                raise
            self._writer = db
        return self._writer

    def _reading(self) -> sqlite3.Connection:
        self._forked()
        if self._reader is None:
            # The file, its mode and its tables come with the writer: made here unless a
            # write is under way (never wait for it: this may be an event loop's thread).
            if self._writer is None and self._write_lock.acquire(blocking=False):
                try:
                    self._writing()
                except sqlite3.OperationalError as exc:
                    if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY:
                        raise  # busy: another process is making them; read what is there
                finally:
                    self._write_lock.release()
            db = _open(self.path)
            db.execute(f"PRAGMA busy_timeout = {int(READ_WAIT * 1000)}")
            self._reader = db
        return self._reader

    def _forked(self) -> None:
        if self._pid != os.getpid():
            # Inherited through fork: the parent's, not ours to use (nor to close).
            self._writer = self._reader = None
            self._pid = os.getpid()

    def __repr__(self) -> str:
        return f"LocalDB({str(self.path)!r})"


def _open(path: Path) -> sqlite3.Connection:
    directory = path.parent
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    # mkdir's mode is cut by the umask and ignored for a directory that exists already.
    if directory.stat().st_mode & 0o077:
        directory.chmod(0o700)
    # Never a descriptor of our own on the file, not even for a moment: closing any
    # descriptor of a file drops every POSIX lock this process holds on it, SQLite's
    # connections' included. Another process then takes itself for the last one, deletes
    # the WAL under our connections, and they read a stale snapshot for ever (a revoked
    # key that went on working). Everything below goes by path.
    if path.is_symlink():
        raise OSError(f"{path} is a symbolic link; remove it (modelplug makes this file)")
    # timeout=0: SQLite's own wait sleeps 1, 2, 5, 10... ms on the caller's thread, an
    # event loop's; LocalDB waits between tries instead (see write).
    db = sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
    try:
        # SQLite makes the file 0644 less the umask; the directory is 0700, so nobody
        # else reached it in between. Its -wal and -shm files take this mode.
        if path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)
    except BaseException:
        db.close()
        raise
    return db


def _raise_unless_busy(exc: sqlite3.OperationalError, deadline: float) -> None:
    """Re-raise ``exc`` unless it is another writer's lock and there is time to wait."""
    if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY or time.monotonic() >= deadline:
        raise exc
