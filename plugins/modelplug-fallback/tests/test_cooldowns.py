"""Cooldowns: a model that just failed is skipped silently by later calls (60 s after a
rate limit or server error, 600 s otherwise), the last candidate is always tried, and
every client shares one table (by default this machine's file, so other processes do
too: see test_processes_share_cooldowns.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from modelplug import ModelError
from modelplug.contract.types import Notice
from modelplug.testing import FakeModel, text
from modelplug_fallback.cooldowns import SHARED
from modelplug_fallback.policy import FallbackPolicy, choose_store
from modelplug_kit import CooldownStore, MemoryCooldowns

CHAIN = {"fallbacks": {"a/m": ["b/m"]}}
NO_RETRIES = {"retries": 0}


def notices(client: Any, spec: str) -> tuple[Any, list[Notice]]:
    seen: list[Notice] = []
    response = client.complete(
        spec, "hi", on_event=lambda e: seen.append(e) if isinstance(e, Notice) else None
    )
    return response, seen


def test_modelplug_stream_skips_a_rate_limited_model_until_its_cooldown_ends(
    client_with: Any, clock: Any, store: Any, kit: Any
) -> None:
    first = FakeModel([kit.rate_limited(), text("a is back")], provider="a")
    second = FakeModel([text("b one"), text("b two")], provider="b")
    client = client_with(first, second, config=CHAIN, options=NO_RETRIES)

    assert notices(client, "a/m")[0].model == "b/m"
    assert store.remaining("a/m") == 60.0

    clock.now += 59
    response, seen = notices(client, "a/m")
    assert response.model == "b/m"
    assert seen == []  # skipped without a notice
    assert len(first.requests) == 1

    clock.now += 2
    response, seen = notices(client, "a/m")
    assert response.text == "a is back"
    assert len(first.requests) == 2


def test_modelplug_stream_cools_other_failures_down_for_ten_minutes(
    client_with: Any, clock: Any, store: Any, kit: Any
) -> None:
    first = FakeModel([kit.HTTPError(402, "payment required"), text("a")], provider="a")
    second = FakeModel([text("b")] * 3, provider="b")
    client = client_with(first, second, config=CHAIN, options=NO_RETRIES)

    notices(client, "a/m")
    assert store.remaining("a/m") == 600.0
    clock.now += 599
    assert notices(client, "a/m")[0].model == "b/m"
    clock.now += 2
    assert notices(client, "a/m")[0].model == "a/m"


def test_modelplug_stream_cooldown_lengths_come_from_settings(
    client_with: Any, clock: Any, store: Any, kit: Any
) -> None:
    first, second = kit.two_models([kit.unavailable()], [text("b")])
    options = {"retries": 0, "cooldown_rate_limit": 5}
    client = client_with(first, second, config=CHAIN, options=options)

    notices(client, "a/m")

    assert store.remaining("a/m") == 5.0


def test_modelplug_stream_a_long_retry_after_lengthens_the_cooldown(
    client_with: Any, clock: Any, store: Any, kit: Any
) -> None:
    first, second = kit.two_models([kit.rate_limited("300")], [text("b")])
    client = client_with(first, second, config=CHAIN, options=NO_RETRIES)

    notices(client, "a/m")

    assert store.remaining("a/m") == 300.0


def test_modelplug_stream_always_tries_the_last_candidate(
    client_with: Any, clock: Any, store: Any, kit: Any
) -> None:
    first, second = kit.two_models([], [text("b despite its cooldown")])
    store.mark("a/m", 60)
    store.mark("b/m", 60)
    client = client_with(first, second, config=CHAIN, options=NO_RETRIES)

    response, seen = notices(client, "a/m")

    assert response.text == "b despite its cooldown"
    assert first.requests == []
    assert seen == []
    assert store.remaining("b/m") == 0  # it answered, so it is free again
    assert store.remaining("a/m") == 60.0


def test_modelplug_stream_tries_a_cooling_model_with_no_alternative(
    client_with: Any, clock: Any, store: Any
) -> None:
    fake = FakeModel([text("only me")])
    store.mark("fake/m", 60)
    client = client_with(fake)

    assert client.complete("fake/m", "hi").text == "only me"


def test_modelplug_stream_keeps_going_past_a_cooling_fallback(
    client_with: Any, clock: Any, store: Any, kit: Any
) -> None:
    first = FakeModel([kit.rate_limited()], provider="a")
    cooling = FakeModel([], provider="b")
    last = FakeModel([text("c")], provider="c")
    store.mark("b/m", 60)
    config = {"fallbacks": {"a/m": ["b/m", "c/m"]}}
    client = client_with(first, cooling, last, config=config, options=NO_RETRIES)

    response, seen = notices(client, "a/m")

    assert response.model == "c/m"
    assert cooling.requests == []
    assert [n.details["to"] for n in seen] == ["c/m"]
    assert seen[0].details["skipped"] == []  # a cooldown skip is silent


def test_modelplug_stream_does_not_cool_down_after_a_context_overflow(
    client_with: Any, clock: Any, store: Any, kit: Any
) -> None:
    first, second = kit.two_models([kit.context_overflow()], [])
    client = client_with(first, second, config=CHAIN)

    with pytest.raises(Exception, match="prompt is too long"):
        client.complete("a/m", "hi")

    assert store.remaining("a/m") == 0


def test_modelplug_stream_uses_any_store_with_the_small_interface(
    make_client: Any, clock: Any, kit: Any
) -> None:
    class RecordingStore:
        def __init__(self) -> None:
            self.marks: list[tuple[str, float]] = []

        def mark(self, key: str, seconds: float) -> None:
            self.marks.append((key, seconds))

        def remaining(self, key: str) -> float:
            return 0.0

        def clear(self, key: str) -> None:
            pass

    recording = RecordingStore()
    assert isinstance(recording, CooldownStore)
    policy = FallbackPolicy({"retries": 0}, store=recording, clock=clock, sleep=clock.sleep)
    first, second = kit.two_models([kit.rate_limited()], [text("b")])
    client = make_client(policy, first, second, config=CHAIN)

    client.complete("a/m", "hi", on_event=lambda e: None)

    assert recording.marks == [("a/m", 60.0)]
    assert SHARED.remaining("a/m") == 0
    assert choose_store(client, "auto").remaining_now("a/m") == 0  # type: ignore[union-attr]


def test_modelplug_stream_concurrent_streams_share_one_cooldown_table(
    make_client: Any, kit: Any
) -> None:
    # Two clients, as two subagents would have, loading the plugin by its entry point:
    # the default policy's table is this machine's file, one store in the process.
    config = {**CHAIN, "fallback": {"retries": 0}}
    fakes = [kit.two_models([kit.rate_limited()], [text("b")]) for _ in range(2)]
    for _, second in fakes:
        second.delay = 0.01  # the two streams interleave on b
    clients = [
        make_client("modelplug-fallback", first, second, entry_points=True, config=config)
        for first, second in fakes
    ]

    async def both() -> list[Any]:
        calls = [c.acomplete("a/m", "hi", on_event=lambda e: None) for c in clients]
        return await asyncio.gather(*calls)

    responses = asyncio.run(both())

    assert [r.model for r in responses] == ["b/m", "b/m"]
    assert len(fakes[0][0].requests) == 1
    assert fakes[1][0].requests == []  # skipped: the first client's failure cooled it
    default = choose_store(clients[0], "auto")
    assert default is choose_store(clients[1], "auto")
    assert default.remaining_now("a/m") > 59  # type: ignore[union-attr]
    assert SHARED.remaining("a/m") == 0  # not this process's memory


def test_modelplug_stream_many_concurrent_calls_on_one_client(
    client_with: Any, clock: Any, store: Any, kit: Any
) -> None:
    first = FakeModel([kit.rate_limited()], provider="a")
    second = FakeModel([text(f"b{i}") for i in range(5)], provider="b", delay=0.001)
    client = client_with(first, second, config=CHAIN, options=NO_RETRIES)

    async def many() -> list[Any]:
        return await asyncio.gather(
            *(client.acomplete("a/m", "hi", on_event=lambda e: None) for _ in range(5))
        )

    responses = asyncio.run(many())

    assert sorted(r.text for r in responses) == [f"b{i}" for i in range(5)]
    assert len(first.requests) == 1


def test_memory_cooldowns_never_shorten_and_forget_when_done() -> None:
    now = [0.0]
    table = MemoryCooldowns(clock=lambda: now[0])
    table.mark("p/m", 600)
    table.mark("p/m", 60)
    assert table.remaining("p/m") == 600
    now[0] = 600.5
    assert table.remaining("p/m") == 0
    assert "p/m" not in repr(table)
    table.mark("p/m", 10)
    table.clear("p/m")
    assert table.remaining("p/m") == 0


def test_modelplug_stream_reports_each_unusable_fallback_once_when_the_cooling_model_fails(
    client_with: Any, clock: Any, store: Any, kit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KEYED_API_KEY", raising=False)
    first = FakeModel([kit.rate_limited(), kit.rate_limited()], provider="a")
    client = client_with(
        first, kit.KeyedProvider(), config={"fallbacks": {"a/m": ["keyed/k"]}}, options=NO_RETRIES
    )
    store.mark("a/m", 60)  # cooling, and its only fallback cannot be built
    seen: list[Notice] = []
    with pytest.raises(ModelError, match="rate limited"):
        client.complete(
            "a/m", "hi", on_event=lambda e: seen.append(e) if isinstance(e, Notice) else None
        )
    reports = " ".join(n.message for n in seen)
    assert reports.count("skipped keyed/k") == 1


class CountingCooldowns(MemoryCooldowns):
    """A cooldown table that counts how often a model's cooldown is read."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []

    def remaining(self, key: str) -> float:
        self.reads.append(key)
        return super().remaining(key)


def test_modelplug_stream_reads_the_cooldown_once_on_a_success(make_client: Any) -> None:
    store = CountingCooldowns()
    client = make_client(FallbackPolicy(store=store), FakeModel([text("x")], provider="a"))

    client.complete("a/m", "hi")

    assert store.reads == ["a/m"]
