"""``modelplug_describe_route``: what the fallback policy would do with a call on a route
now (its chain, what in it cools down, the retries, the store), for ``modelplug
resolve``."""

from __future__ import annotations

import asyncio
from typing import Any

from modelplug import Client
from modelplug.testing import FakeModel
from modelplug_fallback.policy import FallbackPolicy


def fallback_section(client: Client, spec: str) -> dict[str, Any]:
    route = client.resolve(spec)

    async def gather() -> list[Any]:
        found = client.hook.modelplug_describe_route(route=route, client=client)
        return [await each for each in found if each is not None]

    (section,) = [s for s in asyncio.run(gather()) if s and s["section"] == "fallback"]
    return section


def test_modelplug_describe_route(make_client: Any, clock: Any, store: Any, kit: Any) -> None:
    # The chain a call would walk, a candidate cooling down, one that would be skipped.
    policy = FallbackPolicy({"retries": 1}, store=store, clock=clock)
    config = {"fallbacks": {"a/m": ["b/m", "keyed/k", "c/m"]}}
    client = make_client(
        policy,
        FakeModel(provider="a"),
        FakeModel(provider="b"),
        FakeModel(provider="c"),
        kit.KeyedProvider(),
        config=config,
        environ={},
    )
    store.mark("b/m", 41.25)

    section = fallback_section(client, "a/m")

    assert section["lines"] == [
        'chain: a/m -> b/m -> keyed/k -> c/m (from [fallbacks] "a/m")',
        "cooling down: b/m for 41.2 s more, skipped while another candidate can answer",
        "would skip keyed/k: Set KEYED_API_KEY to use the provider keyed.",
        "retries: 1 per model, waiting 1 s doubling to 30 s, or what the server asks up to 30 s",
        f"store: MemoryCooldowns ({section['where']})",
    ]
    assert [e.get("cooling") for e in section["chain"]] == [0.0, 41.2, None, 0.0]
    assert section["chain"][2]["skipped"].startswith("Set KEYED_API_KEY")
    assert section["chain_from"] == "a/m" and section["retries"] == 1


def test_modelplug_describe_route_says_when_the_model_asked_for_cools_down(
    make_client: Any, clock: Any, store: Any
) -> None:
    policy = FallbackPolicy(store=store, clock=clock)
    client = make_client(
        policy,
        FakeModel(provider="a"),
        FakeModel(provider="b"),
        config={"fallbacks": {"a/m": ["b/m"]}},
    )
    store.mark("a/m", 60)

    lines = fallback_section(client, "a/m")["lines"]

    assert "cooling down: a/m for 60 s more, so a call starts further down the chain" in lines


def test_modelplug_describe_route_names_the_setting_for_a_route_without_a_chain(
    make_client: Any,
) -> None:
    client = make_client("modelplug-fallback", FakeModel())

    section = fallback_section(client, "fake/m")

    assert section["lines"][0] == (
        "chain: none (a failure is retried, then raised; [fallbacks] in your settings sets one)"
    )
    assert section["chain"] == [{"spec": "fake/m", "model": "fake/m", "cooling": 0.0}]
    # The entry point's policy: this machine's file, named.
    assert section["store"] == "SqliteCooldowns"
    path = client.settings.data_dir() / "cooldowns.sqlite3"
    assert section["lines"][-1] == (
        f"store: SqliteCooldowns ({path}, shared by this machine's processes)"
    )
