"""Redis killed mid-run. fail = "open": calls go on, counted in this process's memory,
each saying so in a Notice; fail = "closed": calls are refused before anything is sent,
with an error that says why. Either way without a hang (a killed server refuses at
once), and the calls after the process's check found Redis back use it again."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis as sync_redis
from modelplug.contract.types import Notice
from modelplug.testing import FakeModel, text
from modelplug_redis import cooldown_store
from modelplug_redis.connection import StoreUnavailableError, connection_for

BOUND = 60.0  # seconds: a hang guard (nothing here waits out a timeout)


async def redis_found_back(client: Any) -> None:
    """Until the process's check (a PING in the background) finds Redis answering."""
    connection = connection_for(client)
    assert connection is not None
    async with asyncio.timeout(BOUND):
        while connection.is_down():
            await asyncio.sleep(0.01)


def client_for(make_client: Any, redis_config: dict[str, Any], fail: str, fake: Any) -> Any:
    config = {
        "redis": {**redis_config["redis"], "fail": fail},
        "limits": {"budgets": {"tokens": {"tokens": 10**9, "period": "day"}}},
    }
    return make_client(
        fake, "modelplug-limits", "modelplug-redis", entry_points=True, config=config
    )


async def call(client: Any) -> tuple[str, list[Notice]]:
    seen: list[Notice] = []

    def keep(event: Any) -> None:
        if isinstance(event, Notice):
            seen.append(event)

    response = await asyncio.wait_for(client.acomplete("fake/m", "hi", on_event=keep), BOUND)
    return response.text, seen


def counted(redis_server: Any) -> int:
    raw = sync_redis.Redis.from_url(redis_server.url)
    return sum(int(raw.get(key)) for key in raw.keys("*budget:tokens*"))


def test_fail_open_goes_on_in_memory_and_says_so(
    make_client: Any, redis_server: Any, redis_config: dict[str, Any]
) -> None:
    fake = FakeModel([text("one"), text("two"), text("three")])
    client = client_for(make_client, redis_config, "open", fake)

    async def scenario() -> list[tuple[str, list[Notice]]]:
        first = await call(client)
        redis_server.kill()
        second = await call(client)
        redis_server.start()
        await redis_found_back(client)
        third = await call(client)
        await client.aclose()
        return [first, second, third]

    (first, up), (second, down), (third, back) = asyncio.run(scenario())

    assert [first, second, third] == ["one", "two", "three"]
    assert up == [] and back == []
    assert down and all(n.kind == "limits" for n in down)
    assert "is unavailable" in down[0].message
    assert "counting in this process's memory" in down[0].message
    assert counted(redis_server) > 0  # the third call reached the restarted Redis


def test_fail_closed_refuses_before_sending(
    make_client: Any, redis_server: Any, redis_config: dict[str, Any]
) -> None:
    fake = FakeModel([text("one"), text("three")])
    client = client_for(make_client, redis_config, "closed", fake)

    async def scenario() -> tuple[str, BaseException | None, str]:
        first, _ = await call(client)
        redis_server.kill()
        refused: BaseException | None = None
        try:
            await call(client)
        except StoreUnavailableError as exc:
            refused = exc
        redis_server.start()
        await redis_found_back(client)
        third, _ = await call(client)
        await client.aclose()
        return first, refused, third

    first, refused, third = asyncio.run(scenario())

    assert first == "one" and third == "three"
    assert isinstance(refused, StoreUnavailableError)
    assert 'refusing calls while it is down ([redis] fail = "closed")' in str(refused)
    assert len(fake.requests) == 2  # the refused call sent nothing


def test_cooldowns_fail_open_from_memory_and_fail_closed_with_an_error(
    make_client: Any, redis_server: Any, redis_config: dict[str, Any]
) -> None:
    open_store = cooldown_store(
        make_client("modelplug-redis", entry_points=True, config=redis_config)
    )
    closed_config = {"redis": {**redis_config["redis"], "fail": "closed"}}
    closed_store = cooldown_store(
        make_client("modelplug-redis", entry_points=True, config=closed_config)
    )
    assert open_store is not None and closed_store is not None

    async def scenario() -> float:
        await open_store.mark("a/m", 30)
        redis_server.kill()
        with pytest.warns(Warning, match="is unavailable"):
            left = await asyncio.wait_for(open_store.remaining("a/m"), BOUND)
        with pytest.raises(StoreUnavailableError):
            await asyncio.wait_for(closed_store.remaining("a/m"), BOUND)
        await open_store.connection.client.aclose()
        await closed_store.connection.client.aclose()
        return left

    assert 0 < asyncio.run(scenario()) <= 30  # from this process's memory


def test_every_store_of_a_process_learns_of_an_outage_from_the_first_to_meet_it(
    redis_server: Any, redis_config: dict[str, Any]
) -> None:
    # A frozen Redis must cost a request one timeout, not one per store it uses.
    from modelplug import Client
    from modelplug_kit import Charge
    from modelplug_redis import counter_store

    config = {"redis": {**redis_config["redis"], "fail": "open", "retry_interval": 60.0}}
    counters = counter_store(Client(config=config, enable=["modelplug-redis"]))
    cooldowns = cooldown_store(Client(config=config, enable=["modelplug-redis"]))
    assert counters is not None and cooldowns is not None
    assert counters.connection is not cooldowns.connection

    async def scenario() -> Any:
        redis_server.kill()
        outcome = await counters.reserve([Charge("k", 1, 10)])
        await counters.connection.client.aclose()
        return outcome

    outcome = asyncio.run(scenario())
    assert outcome.degraded and "unavailable" in outcome.degraded
    assert counters.connection.is_down() and cooldowns.connection.is_down()
