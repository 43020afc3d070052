"""Keys in an SQLite file in the user's data directory (owner-only, see LocalDB): the
default, shared by the gateway workers of one machine."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from modelplug_kit import LocalDB

from .record import KeyRecord
from .store import KeyExistsError, NoSuchKeyError

__all__ = ["FILE_NAME", "SqliteKeys"]

FILE_NAME = "gateway-keys.sqlite3"
SCHEMA = """
CREATE TABLE IF NOT EXISTS keys (
    name TEXT PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    record TEXT NOT NULL
);
"""


class SqliteKeys:
    def __init__(self, path: Path) -> None:
        self.db = LocalDB(path, SCHEMA)
        self.where = str(path)

    async def add(self, record: KeyRecord) -> None:
        def work(db: sqlite3.Connection) -> None:
            try:
                db.execute(
                    "INSERT INTO keys (name, hash, record) VALUES (?, ?, ?)",
                    (record.name, record.hash, record.to_json()),
                )
            except sqlite3.IntegrityError:
                raise KeyExistsError(record.name) from None

        await self.db.write(work)

    async def find(self, digest: str) -> KeyRecord | None:
        return self._one("SELECT record FROM keys WHERE hash = ?", digest)

    async def named(self, name: str) -> KeyRecord | None:
        return self._one("SELECT record FROM keys WHERE name = ?", name)

    def _one(self, sql: str, value: str) -> KeyRecord | None:
        row = self.db.read(lambda db: db.execute(sql, (value,)).fetchone())
        return None if row is None else KeyRecord.from_json(row[0])

    async def all(self) -> Sequence[KeyRecord]:
        rows = self.db.read(
            lambda db: db.execute("SELECT record FROM keys ORDER BY name").fetchall()
        )
        return [KeyRecord.from_json(row[0]) for row in rows]

    async def replace(self, old: KeyRecord, new: KeyRecord) -> None:
        def work(db: sqlite3.Connection) -> None:
            done = db.execute(
                "UPDATE keys SET hash = ?, record = ? WHERE name = ? AND hash = ?",
                (new.hash, new.to_json(), old.name, old.hash),
            )
            if done.rowcount != 1:
                raise NoSuchKeyError(old.name)

        await self.db.write(work)

    async def has_keys(self) -> bool:
        row = self.db.read(lambda db: db.execute("SELECT 1 FROM keys LIMIT 1").fetchone())
        return row is not None

    def close(self) -> None:
        """Close this process's connections to the file; the next use opens them again."""
        self.db.close()

    def __repr__(self) -> str:
        return f"SqliteKeys({self.where!r})"
