"""Rate pacing from settings: a call with no room waits for the window, with a Notice
that says for what and how long; a wait past ``max_wait`` is a rate_limit error the
fallback policy moves on from."""

from __future__ import annotations

from typing import Any

import pytest
from modelplug import ModelError
from modelplug.contract.types import Notice
from modelplug.testing import FakeModel, text
from modelplug_kit import MemoryCooldowns


def notices(events: list[Any]) -> list[Notice]:
    return [e for e in events if isinstance(e, Notice)]


def test_modelplug_stream_waits_for_the_next_window_when_the_rpm_is_used(
    client_with: Any, clock: Any
) -> None:
    fake = FakeModel([text("1"), text("2"), text("3")])
    client = client_with(fake, limits_options={"fake/m": {"rpm": 2}})
    clock.now = 1_764_590_400.0 + 45  # 15 s left in the minute

    client.complete("fake/m", "hi")
    client.complete("fake/m", "hi")
    seen: list[Any] = []
    assert client.complete("fake/m", "hi", on_event=seen.append).text == "3"

    assert clock.sleeps == [15.0]
    (wait,) = notices(seen)
    assert wait.kind == "wait" and wait.delay == 15.0
    assert wait.message == (
        "fake/m: waiting 15.0 s for room in the request rate of fake/m (2 per minute)"
    )


def test_modelplug_stream_paces_tokens_per_provider(client_with: Any, clock: Any) -> None:
    fake = FakeModel([text("1"), text("2")])
    client = client_with(fake, limits_options={"fake": {"tpm": 1500, "window": 10}})

    client.complete("fake/a", "hi", max_tokens=1000)
    client.complete("fake/b", "hi", max_tokens=1000)  # the provider's window is shared

    assert len(clock.sleeps) == 1 and 0 < clock.sleeps[0] <= 10


def test_modelplug_stream_refuses_a_wait_past_max_wait_as_a_rate_limit(
    client_with: Any, clock: Any
) -> None:
    fake = FakeModel([text("1"), text("never")])
    client = client_with(fake, limits_options={"fake/m": {"rpm": 1}, "max_wait": 5})

    client.complete("fake/m", "hi")
    with pytest.raises(ModelError) as caught:
        client.complete("fake/m", "hi")

    assert caught.value.kind == "rate_limit" and caught.value.error_class.fallback
    assert "longer than max_wait (5 s)" in str(caught.value)
    assert len(fake.requests) == 1 and clock.sleeps == []


def test_modelplug_stream_a_full_window_lets_the_fallback_policy_move_on(
    client_with: Any, clock: Any
) -> None:
    fallback_policy = pytest.importorskip("modelplug_fallback.policy")
    first = FakeModel([text("a1"), text("never")], provider="a")
    second = FakeModel([text("from b")], provider="b")
    fallback = fallback_policy.FallbackPolicy(
        store=MemoryCooldowns(clock=clock), clock=clock, sleep=clock.sleep
    )
    client = client_with(
        fallback,
        first,
        second,
        limits_options={"a/m": {"rpm": 1}, "max_wait": 5},
        config={"fallbacks": {"a/m": ["b/m"]}},
    )

    client.complete("a/m", "hi")
    assert client.complete("a/m", "hi").text == "from b"
    assert len(first.requests) == 1 and clock.sleeps == []


def test_modelplug_stream_a_request_larger_than_the_tpm_never_waits(
    client_with: Any, clock: Any
) -> None:
    client = client_with(FakeModel([text("never")]), limits_options={"fake/m": {"tpm": 100}})

    with pytest.raises(ModelError, match="never fits"):
        client.complete("fake/m", "hi", max_tokens=1000)
    assert clock.sleeps == []


class SlowStore:
    """Memory counters whose first reservation takes 10 ms of the fake clock."""

    def __init__(self, inner: Any, clock: Any) -> None:
        self.inner, self.clock, self.slow = inner, clock, True

    async def reserve(self, charges: Any) -> Any:
        outcome = await self.inner.reserve(charges)
        if self.slow:
            self.clock.now += 0.01
            self.slow = False
        return outcome

    async def settle(self, adjust: Any, learned: Any) -> Any:
        return await self.inner.settle(adjust, learned)

    async def read(self, keys: Any) -> Any:
        return await self.inner.read(keys)


def test_modelplug_stream_recounts_a_reservation_whose_window_ended_on_the_way(
    make_client: Any, clock: Any, counters: Any
) -> None:
    from modelplug_limits.policy import LimitsPolicy

    clock.now = 1_764_590_400.0 + 59.995  # 5 ms before the minute ends
    policy = LimitsPolicy(
        {"fake/m": {"rpm": 5}}, store=SlowStore(counters, clock), clock=clock, sleep=clock.sleep
    )
    client = make_client(policy, FakeModel([text("ok")]))

    assert client.complete("fake/m", "hi").text == "ok"

    old, new = (f"rate:fake/m:requests:{w}" for w in (29_409_840, 29_409_841))
    assert counters.read_now([old])[0][0] == 0  # undone in the window that ended
    assert counters.read_now([new])[0][0] == 1  # counted where the request went
