"""The fallback policy's cooldown table in Redis (``SET key PX`` / ``PTTL``): a model
cooled down in one process is skipped in every other."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from modelplug import warn
from modelplug_kit import MemoryCooldowns

from .connection import StoreUnavailableError
from .scripts import MARK

if TYPE_CHECKING:
    from .connection import Connection

__all__ = ["RedisCooldowns"]


class RedisCooldowns:
    """:class:`modelplug_kit.AsyncCooldownStore` in Redis. When Redis is down:
    fail-open answers from this process's memory (with one warning per outage),
    fail-closed raises :class:`StoreUnavailableError`."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.local = MemoryCooldowns()
        self._warned = False

    def _key(self, key: str) -> str:
        return self.connection.key("cooldown", key)

    def _degraded(self, exc: StoreUnavailableError) -> None:
        if self.connection.options.fail == "closed":
            raise exc
        if not self._warned:
            warn(exc.message)
            self._warned = True

    async def mark(self, key: str, seconds: float) -> None:
        ms = max(1, math.ceil(seconds * 1000))
        self.local.mark(key, seconds)

        try:
            await self.connection.script(MARK, [self._key(key)], [ms])
        except StoreUnavailableError as exc:
            self._degraded(exc)

    async def remaining(self, key: str) -> float:
        async def call(redis: Any) -> Any:
            return await redis.pttl(self._key(key))

        try:
            left = int(await self.connection.run(call))
        except StoreUnavailableError as exc:
            self._degraded(exc)
            return self.local.remaining(key)
        self._warned = False
        return max(0.0, left / 1000)

    async def clear(self, key: str) -> None:
        self.local.clear(key)

        async def call(redis: Any) -> Any:
            return await redis.delete(self._key(key))

        try:
            await self.connection.run(call)
        except StoreUnavailableError as exc:
            self._degraded(exc)

    async def cooling(self) -> dict[str, float]:
        """Every model cooling down in Redis now, and for how many more seconds (for
        ``modelplug cooldowns``).

        :raises StoreUnavailableError: Redis cannot be asked (this process's memory
            would only show its own cooldowns, not the store's).
        """
        start = self._key("")
        pattern = _glob_escaped(start) + "*"

        async def call(redis: Any) -> Any:
            names = [name async for name in redis.scan_iter(match=pattern, count=500)]
            if not names:
                return []
            async with redis.pipeline(transaction=False) as pipe:
                for name in names:
                    pipe.pttl(name)
                return list(zip(names, await pipe.execute(), strict=True))

        found = await self.connection.run(call)
        return {
            name.decode("utf-8", "replace")[len(start) :]: left / 1000
            for name, left in found
            if left > 0
        }

    def __repr__(self) -> str:
        return f"RedisCooldowns({self.connection.where})"


def _glob_escaped(text: str) -> str:
    # SCAN's MATCH is a glob: a prefix or hash tag holding * ? [ ] \ must match itself.
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
