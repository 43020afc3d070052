"""A cooldown store across the network implements the three methods as coroutines
(modelplug-redis does); the policy awaits them, and finds such a store through a
plugin of kind ``stores`` when it was not given one."""

from __future__ import annotations

from typing import Any

from modelplug.testing import text
from modelplug_fallback.policy import FallbackPolicy
from modelplug_kit import AsyncCooldownStore


class AsyncTable:
    def __init__(self) -> None:
        self.until: dict[str, float] = {}
        self.calls: list[str] = []

    async def mark(self, key: str, seconds: float) -> None:
        self.calls.append(f"mark {key} {seconds:g}")
        self.until[key] = seconds

    async def remaining(self, key: str) -> float:
        self.calls.append(f"remaining {key}")
        return self.until.get(key, 0.0)

    async def clear(self, key: str) -> None:
        self.calls.append(f"clear {key}")
        self.until.pop(key, None)


class StoresPlugin:
    """What modelplug-redis looks like to the fallback policy."""

    modelplug_policy = "stores"

    def __init__(self, table: AsyncTable) -> None:
        self.table = table

    def cooldown_store(self, client: Any) -> AsyncTable:
        return self.table


def test_modelplug_stream_awaits_an_async_store(make_client: Any, clock: Any, kit: Any) -> None:
    table = AsyncTable()
    assert isinstance(table, AsyncCooldownStore)
    policy = FallbackPolicy({"retries": 0}, store=table, clock=clock, sleep=clock.sleep)
    first, second = kit.two_models([kit.rate_limited("90")], [text("b"), text("b again")])
    client = make_client(policy, first, second, config={"fallbacks": {"a/m": ["b/m"]}})

    assert client.complete("a/m", "hi").text == "b"
    assert table.until == {"a/m": 90.0}
    assert client.complete("a/m", "hi").text == "b again"  # a/m skipped: cooling
    assert len(first.requests) == 1


def test_modelplug_stream_uses_the_store_a_stores_plugin_offers(
    make_client: Any, clock: Any, kit: Any
) -> None:
    table = AsyncTable()
    policy = FallbackPolicy({"retries": 0}, clock=clock, sleep=clock.sleep)
    first, second = kit.two_models([kit.rate_limited("90")], [text("b")])
    client = make_client(
        policy, StoresPlugin(table), first, second, config={"fallbacks": {"a/m": ["b/m"]}}
    )

    client.complete("a/m", "hi")

    assert "mark a/m 90" in table.calls
