"""RedisCounters keeps the counter store's contract on a real redis-server: a
reservation takes every charge or none, settlements never re-create an ended window,
every key has a TTL, a prefix and a hash tag."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import redis as sync_redis
from modelplug import Client
from modelplug_kit import Charge, Setting
from modelplug_redis import counter_store


def store_on(redis_config: dict[str, Any]) -> Any:
    # Fail closed: a store that went on in memory would test MemoryCounters instead.
    config = {"redis": {**redis_config["redis"], "fail": "closed"}}
    client = Client(config=config, enable=["modelplug-redis"])
    store = counter_store(client)
    assert store is not None
    return store


def test_a_reservation_takes_every_charge_or_none(redis_config: dict[str, Any]) -> None:
    store = store_on(redis_config)

    async def main() -> Any:
        await store.reserve([Charge("b", 9, 10)])
        refused = await store.reserve([Charge("a", 1, 10), Charge("b", 2, 10)])
        values = await store.read(["a", "b"])
        await store.connection.client.aclose()
        return refused, values

    refused, values = asyncio.run(main())
    assert refused.refused == 1 and refused.value == 9 and 0 < refused.retry_in <= 60
    assert values[0] is None and values[1][0] == 9


def test_concurrent_reservations_never_pass_the_limit(redis_config: dict[str, Any]) -> None:
    store = store_on(redis_config)

    async def main() -> int:
        outcomes = await asyncio.gather(*(store.reserve([Charge("k", 3, 100)]) for _ in range(60)))
        await store.connection.client.aclose()
        return sum(o.refused is None for o in outcomes)

    assert asyncio.run(main()) == 33


def test_an_amount_over_the_limit_never_fits(redis_config: dict[str, Any]) -> None:
    store = store_on(redis_config)

    async def main() -> Any:
        outcome = await store.reserve([Charge("k", 11, 10)])
        await store.connection.client.aclose()
        return outcome

    outcome = asyncio.run(main())

    assert outcome.refused == 0 and outcome.retry_in == math.inf


def test_settling_adjusts_live_counters_and_sets_learned_ones(
    redis_config: dict[str, Any],
) -> None:
    store = store_on(redis_config)

    async def main() -> Any:
        await store.reserve([Charge("t", 100, 1000)])
        await store.settle([Charge("t", -70), Charge("gone", 5)], [Setting("room", 3, 5.0)])
        values = await store.read(["t", "gone", "room"])
        await store.connection.client.aclose()
        return values

    tokens, gone, room = asyncio.run(main())
    assert tokens[0] == 30 and gone is None
    assert room[0] == 3 and 0 < room[1] <= 5


def test_countdowns_hold_only_while_they_exist(redis_config: dict[str, Any]) -> None:
    store = store_on(redis_config)

    async def main() -> list[int | None]:
        first = await store.reserve([Charge("c", 1, kind="countdown")])
        await store.settle([], [Setting("c", 1, 30.0)])
        second = await store.reserve([Charge("c", 1, kind="countdown")])
        third = await store.reserve([Charge("c", 1, kind="countdown")])
        await store.connection.client.aclose()
        return [first.refused, second.refused, third.refused]

    assert asyncio.run(main()) == [None, None, 0]


def test_every_key_has_the_prefix_the_hash_tag_and_a_ttl(
    redis_server: Any, redis_config: dict[str, Any]
) -> None:
    redis_config["redis"] = {**redis_config["redis"], "prefix": "app1:", "hash_tag": "tenant"}
    store = store_on(redis_config)

    async def main() -> None:
        await store.reserve([Charge("w", 1, 5, ttl=30.0), Charge("total", 1, 5, ttl=99.0)])
        await store.connection.client.aclose()

    asyncio.run(main())

    raw = sync_redis.Redis.from_url(redis_server.url)
    keys = sorted(k.decode() for k in raw.keys("*"))
    assert keys == ["app1:{tenant}:n:total", "app1:{tenant}:n:w"]
    assert all(0 < raw.pttl(k) <= 99_000 for k in keys)


def test_more_calls_at_once_than_the_pool_has_connections_wait_for_one(
    redis_config: dict[str, Any],
) -> None:
    # redis-py's pool refuses a 101st connection in use at once; that is a busy
    # process, not Redis down: the calls wait their turn (within [redis] timeout).
    store = store_on(redis_config)

    async def main() -> int:
        outcomes = await asyncio.gather(
            *(store.reserve([Charge("many", 1, 1000)]) for _ in range(400))
        )
        await store.connection.client.aclose()
        return sum(o.refused is None and not o.degraded for o in outcomes)

    assert asyncio.run(main()) == 400
