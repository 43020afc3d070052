"""The kit's LocalDB: an SQLite file this machine's processes share. Owner-only, one
atomic write at a time, and a wait for another process's lock that lets the event loop
go on."""

from __future__ import annotations

import asyncio
import sqlite3
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from modelplug_kit import LocalDB

SCHEMA = "CREATE TABLE IF NOT EXISTS n (k TEXT PRIMARY KEY, v INTEGER NOT NULL);"

HOLD_LOCK = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute("INSERT INTO n VALUES ('other', 1)")
print("locked", flush=True)
sys.stdin.readline()
db.execute("COMMIT")
"""


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def add(key: str, amount: int) -> Callable[[sqlite3.Connection], None]:
    def work(db: sqlite3.Connection) -> None:
        db.execute(
            "INSERT INTO n VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = v + excluded.v",
            (key, amount),
        )

    return work


def value(db: LocalDB, key: str) -> int | None:
    row = db.read(lambda c: c.execute("SELECT v FROM n WHERE k = ?", (key,)).fetchone())
    return None if row is None else int(row[0])


def test_the_file_and_its_directory_are_the_owner_s_alone(tmp_path: Path) -> None:
    db = LocalDB(tmp_path / "state" / "x.sqlite3", SCHEMA)

    db.write_now(add("a", 1))

    assert mode(tmp_path / "state") == 0o700
    for name in ("x.sqlite3", "x.sqlite3-wal", "x.sqlite3-shm"):
        assert mode(tmp_path / "state" / name) == 0o600, name


def test_a_directory_and_file_made_wider_before_are_narrowed(tmp_path: Path) -> None:
    directory = tmp_path / "state"
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    (directory / "x.sqlite3").touch(mode=0o644)
    (directory / "x.sqlite3").chmod(0o644)

    LocalDB(directory / "x.sqlite3", SCHEMA).write_now(add("a", 1))

    assert mode(directory) == 0o700
    assert mode(directory / "x.sqlite3") == 0o600


def test_the_file_is_in_wal_mode(tmp_path: Path) -> None:
    db = LocalDB(tmp_path / "x.sqlite3", SCHEMA)

    journal = db.read(lambda c: c.execute("PRAGMA journal_mode").fetchone()[0])

    assert journal == "wal"


def test_a_write_that_raises_leaves_nothing(tmp_path: Path) -> None:
    db = LocalDB(tmp_path / "x.sqlite3", SCHEMA)

    def half(c: sqlite3.Connection) -> None:
        add("a", 5)(c)
        raise ValueError("changed my mind")

    with pytest.raises(ValueError):
        db.write_now(half)

    assert value(db, "a") is None


def test_threads_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    db = LocalDB(tmp_path / "x.sqlite3", SCHEMA)

    def worker() -> None:
        for _ in range(50):
            db.write_now(add("a", 1))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert value(db, "a") == 200


def hold_lock(path: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def test_a_write_waits_for_another_process_s_lock_while_the_loop_goes_on(
    tmp_path: Path,
) -> None:
    db = LocalDB(tmp_path / "x.sqlite3", SCHEMA)
    db.write_now(add("a", 1))  # the file and its table exist
    holder = hold_lock(tmp_path / "x.sqlite3")
    ticks: list[int] = []

    async def main() -> None:
        writing = asyncio.ensure_future(db.write(add("a", 1)))

        async def other_work() -> None:
            # Runs only if the write's wait gives the loop back; lets the holder go
            # once the loop has turned a few times with the write still waiting.
            while len(ticks) < 5:
                ticks.append(writing.done())
                await asyncio.sleep(0.001)
            assert holder.stdin is not None
            holder.stdin.write("\n")
            holder.stdin.flush()

        await asyncio.gather(writing, other_work())

    try:
        asyncio.run(main())
    finally:
        holder.communicate(timeout=30)

    assert ticks == [False] * 5  # the loop went on while the write waited
    assert value(db, "a") == 2 and value(db, "other") == 1  # both writes, none lost


def test_a_lock_held_past_busy_timeout_is_an_error_naming_the_lock(tmp_path: Path) -> None:
    db = LocalDB(tmp_path / "x.sqlite3", SCHEMA, busy_timeout=0.05)
    db.write_now(add("a", 1))
    holder = hold_lock(tmp_path / "x.sqlite3")
    try:
        assert value(db, "a") == 1  # a read never waits for the writer
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            asyncio.run(db.write(add("a", 1)))
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            db.write_now(add("a", 1))
    finally:
        assert holder.stdin is not None
        holder.communicate("\n", timeout=30)

    assert value(db, "a") == 1


def test_a_write_waits_for_another_thread_s_transaction_without_holding_the_loop(
    tmp_path: Path,
) -> None:
    db = LocalDB(tmp_path / "x.sqlite3", SCHEMA)
    inside, leave = threading.Event(), threading.Event()

    def slow(c: sqlite3.Connection) -> None:
        add("thread", 1)(c)
        inside.set()
        leave.wait(timeout=30)  # holds the transaction until the loop has gone on

    thread = threading.Thread(target=db.write_now, args=(slow,))
    thread.start()
    assert inside.wait(timeout=30)
    ticks: list[bool] = []

    async def main() -> None:
        writing = asyncio.ensure_future(db.write(add("loop", 1)))
        while len(ticks) < 5:
            ticks.append(writing.done())
            await asyncio.sleep(0.001)
        leave.set()
        await writing

    try:
        asyncio.run(main())
    finally:
        leave.set()
        thread.join(timeout=30)

    assert ticks == [False] * 5
    assert value(db, "thread") == 1 and value(db, "loop") == 1


ANOTHER_PROCESS_ADDS = """
import sys
from pathlib import Path
from modelplug_kit import LocalDB
db = LocalDB(Path(sys.argv[1]), sys.argv[2])
db.write_now(lambda c: c.execute("UPDATE n SET v = v + 1 WHERE k = 'a'"))
db.close()
"""


def test_a_process_with_the_file_open_sees_what_processes_that_came_and_went_wrote(
    tmp_path: Path,
) -> None:
    # Opening a second descriptor on the file and closing it dropped this process's locks;
    # the next process to close took itself for the last one, deleted the WAL, and this
    # one read a stale snapshot from then on (and wrote into a deleted log).
    path = tmp_path / "x.sqlite3"
    db = LocalDB(path, SCHEMA)
    db.write_now(add("a", 1))
    assert value(db, "a") == 1  # both of this process's connections are open now
    for expected in range(2, 6):
        subprocess.run(
            [sys.executable, "-c", ANOTHER_PROCESS_ADDS, str(path), SCHEMA],
            check=True,
            timeout=60,
        )
        assert value(db, "a") == expected
        db.write_now(add("a", 0))  # this process writes between them, as a server does
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "x.sqlite3",
        "x.sqlite3-shm",
        "x.sqlite3-wal",
    ]  # the log is still there: this process is known to have the file open


def test_a_symbolic_link_in_place_of_the_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.sqlite3").touch()
    (tmp_path / "x.sqlite3").symlink_to(tmp_path / "elsewhere.sqlite3")
    db = LocalDB(tmp_path / "x.sqlite3", SCHEMA)
    with pytest.raises(OSError, match="symbolic link"):
        db.write_now(add("a", 1))
