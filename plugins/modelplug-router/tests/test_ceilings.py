"""A deployment at its rpm, tpm or max_parallel is passed over; when every one is, the
call fails as a rate limit the fallback policy can wait out or fall back from."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from modelplug import ModelError


def test_a_deployment_at_its_rpm_is_skipped_until_its_window_ends(
    client_with: Any, kit: Any, clock: Any
) -> None:
    a, b = kit.labs("a", "b")
    deployments = [{"spec": "a/m", "rpm": 2, "weight": 10}, "b/m"]
    client = client_with(a, b, groups={"g": {"deployments": deployments}})
    models = Counter(client.complete("g", "hi").model for _ in range(10))
    assert models == {"a/m": 2, "b/m": 8}
    clock.now += 61  # a new minute
    assert client.complete("g", "hi").model == "a/m"


def test_a_deployment_at_its_tpm_is_skipped(client_with: Any, kit: Any) -> None:
    a, b = kit.labs("a", "b")
    # Each call counts 30 tokens of text plus max_tokens 20 up front (50), then what
    # it used instead (15).
    deployments = [{"spec": "a/m", "tpm": 100, "weight": 10}, "b/m"]
    client = client_with(a, b, groups={"g": {"deployments": deployments}})
    prompt = "x" * 120  # 30 tokens
    models = [client.complete("g", prompt, max_tokens=20).model for _ in range(8)]
    # After four calls a's window holds 60: the next estimate (50) would pass 100.
    assert Counter(models)["a/m"] == 4
    assert set(models) == {"a/m", "b/m"}


def test_a_deployment_at_max_parallel_is_skipped(client_with: Any, kit: Any) -> None:
    a, b = kit.labs("a", "b")
    deployments = [{"spec": "a/m", "max_parallel": 2, "weight": 100}, "b/m"]
    client = client_with(a, b, groups={"g": {"deployments": deployments}})

    async def run() -> tuple[list[int], str]:
        release = asyncio.Event()
        a.release = b.release = release
        streams = [client.astream("g", "hi") for _ in range(5)]
        for stream in streams:
            async for event in stream:
                if event.type == "text_delta":
                    break
        held = [a.open, b.open]
        release.set()
        for stream in streams:
            async for _ in stream:
                pass
        # Both of a's places are free again.
        done = await client.acomplete("g", "hi")
        return held, done.model or ""

    held, after = asyncio.run(run())
    assert held == [2, 3]
    assert after == "a/m"


def test_every_deployment_full_is_a_rate_limit(client_with: Any, kit: Any) -> None:
    a, b = kit.labs("a", "b")
    deployments = [{"spec": "a/m", "rpm": 1}, {"spec": "b/m", "rpm": 1}]
    client = client_with(a, b, groups={"g": {"deployments": deployments}})
    client.complete("g", "hi")
    client.complete("g", "hi")
    with pytest.raises(ModelError) as raised:
        client.complete("g", "hi")
    assert raised.value.kind == "rate_limit" and raised.value.retryable
    assert "every deployment of the group 'g'" in str(raised.value)
    assert a.calls + b.calls == 2
