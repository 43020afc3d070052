"""Each strategy, on in-process deployments, the fake clock and a seeded random source."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from modelplug.contract.types import Price


def answered(client: Any, group: str, calls: int) -> Counter[str]:
    return Counter(client.complete(group, "hi").model for _ in range(calls))


def test_weighted_shares_the_calls_by_weight(client_with: Any, kit: Any) -> None:
    a, b, c = kit.labs("a", "b", "c")
    deployments = [{"spec": "a/m", "weight": 1}, {"spec": "b/m", "weight": 3}, "c/m"]
    client = client_with(a, b, c, groups={"g": {"deployments": deployments}})
    # Weights 1, 3 and 1 (the default): 100, 300 and 100 of 500 calls, exactly.
    assert answered(client, "g", 500) == {"a/m": 100, "b/m": 300, "c/m": 100}


def test_weighted_is_the_default_with_equal_weights(client_with: Any, kit: Any) -> None:
    a, b = kit.labs("a", "b")
    client = client_with(a, b, groups={"g": {"deployments": ["a/m", "b/m"]}})
    assert answered(client, "g", 10) == {"a/m": 5, "b/m": 5}


def test_least_busy_spreads_open_streams_evenly(client_with: Any, kit: Any) -> None:
    four = kit.labs("a", "b", "c", "d")
    deployments = [f"{lab.provider}/m" for lab in four]
    # Weights that would send most calls to "a" if least-busy looked at them.
    deployments[0] = {"spec": "a/m", "weight": 50}
    client = client_with(
        *four, groups={"g": {"deployments": deployments, "strategy": "least-busy"}}
    )

    async def run() -> list[int]:
        release = asyncio.Event()
        for lab in four:
            lab.release = release
        streams = [client.astream("g", "hi") for _ in range(40)]
        for stream in streams:  # each stream up to its first text: all 40 in flight
            async for event in stream:
                if event.type == "text_delta":
                    break
        in_flight = [lab.open for lab in four]
        release.set()
        for stream in streams:
            async for _ in stream:
                pass
        return in_flight

    assert asyncio.run(run()) == [10, 10, 10, 10]
    assert [lab.open for lab in four] == [0, 0, 0, 0]


def test_latency_prefers_the_fastest_after_trying_each(
    client_with: Any, kit: Any, clock: Any
) -> None:
    slow = kit.Lab("slow", clock=clock, latency=2.0)
    fast = kit.Lab("fast", clock=clock, latency=0.3)
    middle = kit.Lab("middle", clock=clock, latency=1.0)
    client = client_with(
        slow,
        fast,
        middle,
        groups={"g": {"deployments": ["slow/m", "fast/m", "middle/m"], "strategy": "latency"}},
    )
    # Every deployment is tried once (its latency is unknown), then the fastest wins.
    first = answered(client, "g", 3)
    assert first == {"slow/m": 1, "fast/m": 1, "middle/m": 1}
    assert answered(client, "g", 20) == {"fast/m": 20}
    # The fastest gets slow: its moving average rises past the middle one's.
    fast.latency = 5.0
    later = answered(client, "g", 20)
    assert later["middle/m"] > later["fast/m"] and "slow/m" not in later


def test_usage_sends_calls_where_the_windows_are_emptiest(client_with: Any, kit: Any) -> None:
    a, b = kit.labs("a", "b")
    deployments = [{"spec": "a/m", "rpm": 100}, {"spec": "b/m", "rpm": 300}]
    client = client_with(a, b, groups={"g": {"deployments": deployments, "strategy": "usage"}})
    # Each call goes to the deployment whose rpm window is the least full, as a share
    # of its ceiling: the shares stay level, 1 to 3.
    assert answered(client, "g", 200) == {"a/m": 50, "b/m": 150}


def test_cost_sends_calls_to_the_cheapest(client_with: Any, kit: Any) -> None:
    # Hosted (not local): a local server's model would be free.
    dear = kit.Lab("dear", price=Price(input=3, output=15), local=False)
    cheap = kit.Lab("cheap", price=Price(input="0.1", output="0.4"), local=False)
    unknown = kit.Lab("unknown", local=False)
    client = client_with(
        dear,
        cheap,
        unknown,
        groups={"g": {"deployments": ["dear/m", "unknown/m", "cheap/m"], "strategy": "cost"}},
    )
    assert answered(client, "g", 10) == {"cheap/m": 10}
