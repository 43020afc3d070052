"""The limits policy's counter store in Redis: a reservation is one script call, a
settlement another, so a call costs at most two round trips.

A reservation of countdowns alone (the rooms servers reported: what the limits policy
reserves for a route no ``[limits]`` counts) takes nothing while no room exists, and no
room exists while the *rooms marker* is absent: every settlement that sets a room keeps
the marker alive at least as long, and every script call reads it. So while this
process heard, less than :data:`ROOMS_FRESH` seconds ago, that no room exists (the
gateway's own reservation for the key, made just before, tells it), such a reservation
is answered without a round trip: a gateway call costs one round trip, not two. A room
another process learned (a 429, a server's headers) reaches this one within that time.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from modelplug_kit import Charge, MemoryCounters, Outcome, Setting

from .connection import StoreUnavailableError
from .scripts import RESERVE, SETTLE

if TYPE_CHECKING:
    from .connection import Connection

__all__ = ["ROOMS_FRESH", "RedisCounters"]

ROOMS_FRESH = 0.5  # seconds "no room exists" is trusted without asking Redis again
MARKER = "rooms"  # the rooms marker's name (a counter name no policy makes)


def _ms(seconds: float) -> int:
    return max(1, math.ceil(seconds * 1000))


class _Rooms:
    """What this process last heard of the rooms in one Redis (by URL and marker key),
    in monotonic seconds: when (``heard``), and until when a room may exist."""

    __slots__ = ("heard", "until")

    def __init__(self) -> None:
        self.heard = -math.inf  # never: ask
        self.until = 0.0


# Shared by every store of the process on one Redis (as the outage state is): the gate's
# reservation tells the limits policy's store, which the same call asks next.
_ROOMS: dict[tuple[str, str], _Rooms] = {}


class RedisCounters:
    """:class:`modelplug_kit.CounterStore` in Redis, with this process's memory to
    fall back on when Redis is down and ``[redis] fail = "open"``.

    :param monotonic: seconds, for how long "no room exists" is trusted.
    """

    def __init__(
        self, connection: Connection, *, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self.connection = connection
        self.local = MemoryCounters()
        self.monotonic = monotonic
        self.marker = connection.key("n", MARKER)
        self.rooms = _ROOMS.setdefault((connection.url, self.marker), _Rooms())

    def no_room_known(self) -> bool:
        """Whether this process heard lately that no room exists in this Redis (and
        Redis is not down: then the memory fallback, which may hold rooms, answers)."""
        now = self.monotonic()
        rooms = self.rooms
        return (
            now - rooms.heard < ROOMS_FRESH and now >= rooms.until and not self.connection.is_down()
        )

    def _heard(self, asked: float, marker: int) -> None:
        # ``asked``: before the script ran, so "lately" is never longer than it was. A
        # room heard of counts whatever the order the answers arrive in.
        rooms = self.rooms
        rooms.heard = max(rooms.heard, asked)
        if marker >= 0:
            rooms.until = max(rooms.until, self.monotonic() + marker / 1000)
        elif marker == -1:  # a marker without a TTL (no script sets one): trust nothing
            rooms.until = max(rooms.until, self.monotonic() + ROOMS_FRESH)

    async def reserve(self, charges: Sequence[Charge]) -> Outcome:
        if all(c.kind == "countdown" for c in charges) and self.no_room_known():
            return Outcome()  # a countdown whose counter does not exist always fits
        keys = [self.connection.key("n", c.key) for c in charges]
        keys.append(self.marker)
        args: list[Any] = []
        for c in charges:
            limit = -1 if c.limit is None else c.limit
            ttl = _ms(c.ttl + c.grace)
            args += [c.amount, limit, ttl, c.kind, "1" if c.refresh else "0"]

        asked = self.monotonic()
        try:
            answer = await self.connection.script(RESERVE, keys, args)
        except StoreUnavailableError as exc:
            if self.connection.options.fail == "closed":
                raise
            outcome = self.local.reserve_now(charges)
            return Outcome(outcome.refused, outcome.value, outcome.retry_in, exc.message)
        self._heard(asked, int(answer[-1]))
        if int(answer[0]) == 0:
            return Outcome()
        index, value, pttl = (int(x) for x in answer[:3])
        grace = charges[index - 1].grace
        retry_in = math.inf if pttl == -3 else max(0.0, pttl / 1000 - grace)
        return Outcome(index - 1, value, retry_in)

    async def settle(self, adjust: Sequence[Charge], learned: Sequence[Setting]) -> str | None:
        keys = [self.connection.key("n", c.key) for c in adjust]
        keys += [self.connection.key("n", s.key) for s in learned]
        keys.append(self.marker)
        args: list[Any] = [len(adjust), *(c.amount for c in adjust)]
        for s in learned:
            args += [s.value, _ms(s.ttl), "1" if s.room else "0"]
        rooms = [s.ttl for s in learned if s.room]
        if rooms:
            # This process knows at once (the others when they next ask).
            self.rooms.until = max(self.rooms.until, self.monotonic() + max(rooms))

        try:
            await self.connection.script(SETTLE, keys, args)
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
