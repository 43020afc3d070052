"""What a key store does, whichever holds the keys (SQLite here, Redis when set)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .record import KeyRecord

__all__ = ["KeyExistsError", "KeyStore", "NoSuchKeyError"]


class KeyExistsError(Exception):
    """A key of that name exists already."""


class NoSuchKeyError(Exception):
    """No key of that name."""


class KeyStore(Protocol):
    where: str

    async def add(self, record: KeyRecord) -> None:
        """Store a new key; raises KeyExistsError when the name is taken."""
        ...

    async def find(self, digest: str) -> KeyRecord | None:
        """The key whose hash is ``digest`` (one round trip, an index lookup)."""
        ...

    async def named(self, name: str) -> KeyRecord | None: ...

    async def all(self) -> Sequence[KeyRecord]: ...

    async def replace(self, old: KeyRecord, new: KeyRecord) -> None:
        """Put ``new`` in the place of ``old`` (same name; a rotation changes the hash,
        so the old key stops matching in the same step)."""
        ...

    async def has_keys(self) -> bool: ...
