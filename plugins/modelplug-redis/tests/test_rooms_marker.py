"""A reservation of countdowns alone (the rooms servers reported: all the limits policy
reserves for a route no ``[limits]`` counts) asks Redis only when a room may exist: the
rooms marker, which every settlement that sets a room keeps alive at least as long, was
present the last time this process asked, or that was ROOMS_FRESH seconds ago or more.
Scripts are counted by redis-server itself (INFO commandstats)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

import redis as sync_redis
from modelplug import Client
from modelplug_kit import Charge, Setting
from modelplug_redis import counter_store
from modelplug_redis.counters import ROOMS_FRESH, RedisCounters

ROOMS = [Charge("learned:p/m@K:requests", 1, kind="countdown"), Charge("learned:p/m@K:tokens", 50, kind="countdown")]  # fmt: skip


class Tick:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def store_on(redis_config: dict[str, Any], tick: Tick) -> RedisCounters:
    config = {"redis": {**redis_config["redis"], "fail": "closed"}}
    made = counter_store(Client(config=config, enable=["modelplug-redis"]))
    assert made is not None
    return RedisCounters(made.connection, monotonic=tick)


def scripts(redis_server: Any) -> int:
    stats = sync_redis.Redis.from_url(redis_server.url).info("commandstats")
    return int(stats.get("cmdstat_evalsha", {}).get("calls", 0))


SETTLE_ELSEWHERE = r"""
import asyncio, json, sys
from modelplug import Client
from modelplug_kit import Setting
from modelplug_redis import counter_store
config, key, ttl = json.loads(sys.argv[1]), sys.argv[2], float(sys.argv[3])
store = counter_store(Client(config=config, enable=["modelplug-redis"]))
async def main():
    await store.settle([], [Setting(key, 0, ttl)])
    await store.connection.client.aclose()
asyncio.run(main())
"""


def settle_in_another_process(redis_config: dict[str, Any], key: str, ttl: float) -> None:
    config = json.dumps({"redis": {**redis_config["redis"], "fail": "closed"}})
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
    subprocess.run(
        [sys.executable, "-c", SETTLE_ELSEWHERE, config, key, str(ttl)],
        env=env,
        check=True,
        timeout=60,
    )


def test_countdowns_alone_ask_redis_only_once_what_it_last_said_is_stale(
    redis_server: Any, redis_config: dict[str, Any]
) -> None:
    tick = Tick()
    store = store_on(redis_config, tick)

    async def main() -> list[Any]:
        outcomes = [await store.reserve([Charge("rate:w", 1, 10)])]  # asks: no room
        before = scripts(redis_server)
        outcomes += [await store.reserve(ROOMS) for _ in range(5)]
        asked = [scripts(redis_server) - before]
        tick.now += ROOMS_FRESH
        outcomes.append(await store.reserve(ROOMS))  # stale: asks again
        asked.append(scripts(redis_server) - before)
        await store.connection.client.aclose()
        return [asked, *outcomes]

    asked, *outcomes = asyncio.run(main())
    assert asked == [0, 1]
    assert all(o.refused is None and not o.degraded for o in outcomes)


def test_a_room_this_process_learns_holds_at_once_for_every_store_of_it(
    redis_server: Any, redis_config: dict[str, Any]
) -> None:
    tick = Tick()
    store, other = store_on(redis_config, tick), store_on(redis_config, tick)

    async def main() -> list[int | None]:
        await store.reserve([Charge("rate:w", 1, 10)])  # heard: no room
        await store.settle([], [Setting(ROOMS[0].key, 0, 30.0)])
        refused = [(await store.reserve(ROOMS)).refused, (await other.reserve(ROOMS)).refused]
        await store.connection.client.aclose()
        await other.connection.client.aclose()
        return refused

    assert asyncio.run(main()) == [0, 0]
    raw = sync_redis.Redis.from_url(redis_server.url)
    marker = store.marker
    assert marker.startswith("modelplug:{modelplug}:n:")
    assert 0 < raw.pttl(marker) <= 30_000


def test_a_room_another_process_learned_is_heard_within_rooms_fresh(
    redis_server: Any, redis_config: dict[str, Any]
) -> None:
    tick = Tick()
    store = store_on(redis_config, tick)

    async def heard_no_room() -> None:
        await store.reserve([Charge("rate:w", 1, 10)])

    async def then() -> list[int | None]:
        tick.now += ROOMS_FRESH / 5
        # Within ROOMS_FRESH of hearing there was none: not asked (what a call sent at
        # the moment of that answer would have found).
        refused = [(await store.reserve(ROOMS)).refused]
        tick.now += ROOMS_FRESH
        refused.append((await store.reserve(ROOMS)).refused)
        refused.append((await store.reserve(ROOMS)).refused)  # the room is known now
        await store.connection.client.aclose()
        return refused

    asyncio.run(heard_no_room())
    settle_in_another_process(redis_config, ROOMS[0].key, 30.0)
    before = scripts(redis_server)
    assert asyncio.run(then()) == [None, 0, 0]
    assert scripts(redis_server) - before == 2


def test_a_value_only_read_back_is_not_a_room(
    redis_server: Any, redis_config: dict[str, Any]
) -> None:
    # The gateway's last cost of a key's call is set this way: it must not make every
    # reservation of countdowns ask Redis for the 30 days it lives.
    tick = Tick()
    store = store_on(redis_config, tick)

    async def main() -> Any:
        await store.settle([], [Setting("gwkey:k:estimate", 5, 30.0, room=False)])
        await store.reserve([Charge("rate:w", 1, 10)])
        before = scripts(redis_server)
        outcome = await store.reserve(ROOMS)
        after = scripts(redis_server)
        values = await store.read(["gwkey:k:estimate"])
        await store.connection.client.aclose()
        return outcome, after - before, values

    outcome, asked, values = asyncio.run(main())
    assert outcome.refused is None and asked == 0
    assert values[0] is not None and values[0][0] == 5
    assert not sync_redis.Redis.from_url(redis_server.url).exists(store.marker)
