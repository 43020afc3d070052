"""The limits policy's counter store in Redis: a reservation is one script call, a
settlement another, so a call costs at most two round trips."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from modelplug_limits.store import Charge, MemoryCounters, Outcome, Setting

from .connection import StoreUnavailableError
from .scripts import RESERVE, SETTLE

if TYPE_CHECKING:
    from .connection import Connection

__all__ = ["RedisCounters"]


def _ms(seconds: float) -> int:
    return max(1, math.ceil(seconds * 1000))


class RedisCounters:
    """:class:`modelplug_limits.CounterStore` in Redis, with this process's memory to
    fall back on when Redis is down and ``[redis] fail = "open"``."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.local = MemoryCounters()
        self._scripts: dict[int, tuple[Any, Any]] = {}

    def _script(self, redis: Any, index: int) -> Any:
        # Registered per redis client (one per event loop): EVALSHA, loaded on NOSCRIPT.
        found = self._scripts.get(id(redis))
        if found is None or found[0] is not redis:
            found = (redis, (redis.register_script(RESERVE), redis.register_script(SETTLE)))
            self._scripts[id(redis)] = found
        return found[1][index]

    async def reserve(self, charges: Sequence[Charge]) -> Outcome:
        keys = [self.connection.key("n", c.key) for c in charges]
        args: list[Any] = []
        for c in charges:
            limit = -1 if c.limit is None else c.limit
            ttl = _ms(c.ttl + c.grace)
            args += [c.amount, limit, ttl, c.kind, "1" if c.refresh else "0"]

        async def call(redis: Any) -> Any:
            return await self._script(redis, 0)(keys=keys, args=args)

        try:
            answer = await self.connection.run(call)
        except StoreUnavailableError as exc:
            if self.connection.options.fail == "closed":
                raise
            outcome = self.local.reserve_now(charges)
            return Outcome(outcome.refused, outcome.value, outcome.retry_in, exc.message)
        if int(answer[0]) == 0:
            return Outcome()
        index, value, pttl = (int(x) for x in answer)
        grace = charges[index - 1].grace
        retry_in = math.inf if pttl == -3 else max(0.0, pttl / 1000 - grace)
        return Outcome(index - 1, value, retry_in)

    async def settle(self, adjust: Sequence[Charge], learned: Sequence[Setting]) -> str | None:
        keys = [self.connection.key("n", c.key) for c in adjust]
        keys += [self.connection.key("n", s.key) for s in learned]
        args: list[Any] = [len(adjust), *(c.amount for c in adjust)]
        for s in learned:
            args += [s.value, _ms(s.ttl)]

        async def call(redis: Any) -> Any:
            return await self._script(redis, 1)(keys=keys, args=args)

        try:
            await self.connection.run(call)
        except StoreUnavailableError as exc:
            if self.connection.options.fail == "closed":
                # The call already answered: its settlement is lost, not its answer.
                return f"{exc.message}; this call's settlement is lost"
            self.local.settle_now(adjust, learned)
            return str(exc.message)
        return None

    async def read(self, keys: Sequence[str]) -> list[tuple[int, float] | None]:
        names = [self.connection.key("n", k) for k in keys]

        async def call(redis: Any) -> Any:
            async with redis.pipeline(transaction=False) as pipe:
                for name in names:
                    pipe.get(name)
                    pipe.pttl(name)
                return await pipe.execute()

        answer = await self.connection.run(call)
        out: list[tuple[int, float] | None] = []
        for value, pttl in zip(answer[::2], answer[1::2], strict=True):
            out.append(None if value is None else (int(value), max(0, int(pttl)) / 1000))
        return out

    def __repr__(self) -> str:
        return f"RedisCounters({self.connection.where})"
