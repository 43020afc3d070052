"""Keys in the operator's Redis (``[redis]``, through modelplug-redis's connection: its
timeouts, its outage state), shared by every replica: a revocation is seen by the next
lookup of every worker on every machine.

Layout: ``<prefix>{<tag>}:gwkey:<hash>`` holds the record (a lookup is one GET), and
``...:gwname:<name>`` the hash of the key of that name. A change is one MULTI/EXEC, so
a rotated key's old hash stops matching in the same step that the new one starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .record import KeyRecord
from .store import KeyExistsError, NoSuchKeyError

if TYPE_CHECKING:
    from modelplug_redis import Connection

__all__ = ["RedisKeys"]


class RedisKeys:
    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.where = connection.where

    def _by_hash(self, digest: str) -> str:
        return self.connection.key("gwkey", digest)

    def _by_name(self, name: str) -> str:
        return self.connection.key("gwname", name)

    async def add(self, record: KeyRecord) -> None:
        name_key, hash_key = self._by_name(record.name), self._by_hash(record.hash)

        async def call(redis: Any) -> Any:
            # SET NX on the name first: two creators of one name, one wins.
            if not await redis.set(name_key, record.hash, nx=True):
                return False
            await redis.set(hash_key, record.to_json())
            return True

        if not await self.connection.run(call):
            raise KeyExistsError(record.name)

    async def find(self, digest: str) -> KeyRecord | None:
        hash_key = self._by_hash(digest)

        async def call(redis: Any) -> Any:
            return await redis.get(hash_key)

        found = await self.connection.run(call)
        return None if found is None else KeyRecord.from_json(found)

    async def named(self, name: str) -> KeyRecord | None:
        name_key = self._by_name(name)

        async def call(redis: Any) -> Any:
            digest = await redis.get(name_key)
            return None if digest is None else await redis.get(self._by_hash(digest.decode()))

        found = await self.connection.run(call)
        return None if found is None else KeyRecord.from_json(found)

    async def all(self) -> Sequence[KeyRecord]:
        pattern = self._by_name("*")

        async def call(redis: Any) -> Any:
            digests = [await redis.get(k) async for k in redis.scan_iter(match=pattern, count=500)]
            wanted = [self._by_hash(d.decode()) for d in digests if d is not None]
            return await redis.mget(wanted) if wanted else []

        found = await self.connection.run(call)
        records = [KeyRecord.from_json(raw) for raw in found if raw is not None]
        return sorted(records, key=lambda r: r.name)

    async def replace(self, old: KeyRecord, new: KeyRecord) -> None:
        name_key = self._by_name(old.name)
        old_key, new_key = self._by_hash(old.hash), self._by_hash(new.hash)

        async def call(redis: Any) -> Any:
            async with redis.pipeline(transaction=True) as pipe:
                await pipe.watch(name_key)
                current = await pipe.get(name_key)
                if current is None or current.decode() != old.hash:
                    return False
                pipe.multi()
                if old.hash != new.hash:
                    pipe.delete(old_key)
                pipe.set(new_key, new.to_json())
                pipe.set(name_key, new.hash)
                await pipe.execute()
                return True

        if not await self.connection.run(call):
            raise NoSuchKeyError(old.name)

    async def has_keys(self) -> bool:
        pattern = self._by_name("*")

        async def call(redis: Any) -> Any:
            async for _ in redis.scan_iter(match=pattern, count=500):
                return True
            return False

        return bool(await self.connection.run(call))

    def __repr__(self) -> str:
        return f"RedisKeys({self.where})"
