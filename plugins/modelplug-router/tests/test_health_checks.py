"""Health checks (``health_interval``) on real loopback servers and an injected clock:
an idle deployment is probed (its server's ``GET /v1/models``) once the interval has
passed and not before, a failed probe cools it so calls go elsewhere, the last probe
shows in ``modelplug resolve``, and ``aclose`` stops a probe still running."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from modelplug import ConfigError
from modelplug_kit.testing import WireServer
from modelplug_router.groups import read_group
from modelplug_router.health import PROBES_KEY, Probes

RECORDINGS = Path(__file__).parent / "recordings"
COMPAT = "modelplug-openai-compat"
MODELS = "/v1/models"
UNAVAILABLE = {"error": {"message": "The server is overloaded", "type": "server_error"}}

pytest.importorskip("modelplug_openai_compat", reason="the deployments are served through it")


def recorded(name: str) -> bytes:
    raw = (RECORDINGS / name).read_bytes().splitlines(True)
    return b"".join(line for line in raw if not line.startswith(b"#"))


@pytest.fixture
def servers() -> Iterator[tuple[WireServer, WireServer]]:
    east, west = WireServer().start(), WireServer().start()
    yield east, west
    east.stop()
    west.stop()


def config(east: WireServer, west: WireServer, *, east_weight: int = 1, **group: Any) -> Any:
    """Two vLLM deployments (so core's probe asks ``/v1/models``)."""
    provider = {"type": "openai-compatible", "server": "vllm"}
    return {
        "providers": {
            "east": {**provider, "base_url": east.url + "/v1"},
            "west": {**provider, "base_url": west.url + "/v1"},
        },
        "groups": {
            "g": {"deployments": [{"spec": "east/m", "weight": east_weight}, "west/m"], **group}
        },
        "fallback": {"cooldown_rate_limit": 30},
    }


def answer(server: WireServer) -> None:
    server.add(recorded("chat_ok.sse"), path="/v1/chat/completions")


def listing(server: WireServer, **kwargs: Any) -> None:
    server.add(recorded("vllm_models.json"), content_type="application/json", path=MODELS, **kwargs)


def probes_of(server: WireServer) -> int:
    return sum(1 for r in server.requests if r.path == MODELS)


async def probes_done(client: Any) -> None:
    """Wait for the probes running on this loop (none: nothing to wait for)."""
    running = list(client.async_http(PROBES_KEY, Probes).tasks)
    if running:
        await asyncio.wait(running)


async def west_section(router: Any, client: Any) -> dict[str, Any]:
    section = await router.modelplug_describe_route(client.resolve("g"), client)
    return section["deployments"][1] | {"line": section["lines"][2]}


def test_an_idle_deployment_is_probed_once_the_interval_passed_not_before(
    make_client: Any, router: Any, clock: Any, servers: tuple[WireServer, WireServer]
) -> None:
    east, west = servers
    # East takes every call (weight 1000 to 1): west stays idle.
    client = make_client(
        router, COMPAT, config=config(east, west, east_weight=1000, health_interval="30s")
    )

    async def run() -> list[int]:
        seen = []
        for step in (0, 20, 15):  # t = 1000, 1020, 1035
            clock.now += step
            answer(east)
            listing(west)
            assert (await client.acomplete("g", "hi")).model == "east/m"
            await probes_done(client)
            seen.append(probes_of(west))
        await client.aclose()
        return seen

    # West is probed on the group's first use, not 20 s later, again 35 s later.
    assert asyncio.run(run()) == [1, 1, 2]
    assert probes_of(east) == 0  # its calls say it is alive: never probed
    assert len(west.requests) == 2


def test_a_failed_probe_cools_the_deployment_and_calls_go_elsewhere(
    make_client: Any, router: Any, clock: Any, servers: tuple[WireServer, WireServer]
) -> None:
    east, west = servers
    client = make_client(router, COMPAT, config=config(east, west, health_interval="1m"))
    west.add_json(UNAVAILABLE, status=503, path=MODELS)

    async def run() -> tuple[list[str], dict[str, Any], list[str]]:
        answer(east)
        first = (await client.acomplete("g", "hi")).model  # east; west probed, 503
        await probes_done(client)
        cooled = await west_section(router, client)
        models = [first]
        for _ in range(3):  # equal weights: west's turns go east while it cools
            answer(east)
            models.append((await client.acomplete("g", "hi")).model)
        clock.now += 31  # the cooldown ([fallback] cooldown_rate_limit) is over
        answer(east)
        answer(west)
        after = [(await client.acomplete("g", "hi")).model for _ in range(2)]
        await client.aclose()
        return models, cooled, after

    models, cooled, after = asyncio.run(run())
    assert models == ["east/m"] * 4
    assert cooled["last_probe"] == {"ok": False, "seconds_ago": 0.0}
    assert cooled["cooldown_s"] == 30.0 and "cooling 30 s" in cooled["line"]
    assert "last probe failed 0 s ago" in cooled["line"]
    assert set(after) == {"east/m", "west/m"}
    assert west.requests[0].path == MODELS


def test_resolve_shows_the_last_probe(
    make_client: Any, router: Any, clock: Any, servers: tuple[WireServer, WireServer]
) -> None:
    east, west = servers
    client = make_client(
        router, COMPAT, config=config(east, west, east_weight=1000, health_interval="30s")
    )

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        before = await west_section(router, client)
        answer(east)
        listing(west)
        await client.acomplete("g", "hi")
        await probes_done(client)
        clock.now += 12
        after = await west_section(router, client)
        await client.aclose()
        return before, after

    before, after = asyncio.run(run())
    assert before["last_probe"] is None and before["health_interval_s"] == 30.0
    assert "probed when idle 30 s, no probe yet" in before["line"]
    assert after["last_probe"] == {"ok": True, "seconds_ago": 12.0}
    assert after["line"].endswith("free, probed when idle 30 s, last probe ok 12 s ago")


def test_no_probe_without_health_interval(
    make_client: Any, router: Any, clock: Any, servers: tuple[WireServer, WireServer]
) -> None:
    east, west = servers
    client = make_client(router, COMPAT, config=config(east, west, east_weight=1000))

    async def run() -> dict[str, Any]:
        for _ in range(2):
            answer(east)
            await client.acomplete("g", "hi")
            clock.now += 3600
        assert not client.async_http(PROBES_KEY, Probes).tasks
        section = await west_section(router, client)
        await client.aclose()
        return section

    section = asyncio.run(run())
    assert west.requests == []
    assert section["last_probe"] is None and section["health_interval_s"] is None
    assert "probe" not in section["line"]


def test_aclose_stops_a_probe_still_running(
    make_client: Any, router: Any, servers: tuple[WireServer, WireServer]
) -> None:
    east, west = servers
    client = make_client(
        router, COMPAT, config=config(east, west, east_weight=1000, health_interval="30s")
    )
    listing(west, delay=5.0)  # answers long after the client is closed

    async def run() -> tuple[bool, set[asyncio.Task[Any]]]:
        answer(east)
        await client.acomplete("g", "hi")
        probing = list(client.async_http(PROBES_KEY, Probes).tasks)
        assert len(probing) == 1 and not probing[0].done()
        await client.aclose()
        return probing[0].cancelled(), asyncio.all_tasks() - {asyncio.current_task()}

    cancelled, left = asyncio.run(run())
    assert cancelled and not left
    section = asyncio.run(west_section(router, client))
    assert section["last_probe"] is None and section["cooldown_s"] == 0  # not a failure


@pytest.mark.parametrize(
    ("said", "seconds"), [("30s", 30.0), ("5m", 300.0), ("1h", 3600.0), (45, 45.0), ("1.5m", 90.0)]
)
def test_health_interval_durations(said: Any, seconds: float) -> None:
    group = read_group("g", {"deployments": ["a/m"], "health_interval": said})
    assert group.deployments[0].health_interval == seconds and group.probed


@pytest.mark.parametrize("said", ["soon", "0s", "-5s", "30", "", True, 0, "30d"])
def test_a_bad_health_interval_names_the_fix(said: Any) -> None:
    with pytest.raises(ConfigError, match=r'\[groups.g\] health_interval must be .*"30s"'):
        read_group("g", {"deployments": ["a/m"], "health_interval": said})


def test_a_deployment_table_sets_its_own_health_interval() -> None:
    group = read_group(
        "g",
        {
            "deployments": ["a/m", {"spec": "b/m", "health_interval": "2m"}],
            "health_interval": "30s",
        },
    )
    assert [d.health_interval for d in group.deployments] == [30.0, 120.0]
    alone = read_group("g", {"deployments": ["a/m", {"spec": "b/m", "health_interval": "10s"}]})
    assert [d.health_interval for d in alone.deployments] == [None, 10.0] and alone.probed
    assert not read_group("g", {"deployments": ["a/m"]}).probed
    with pytest.raises(ConfigError, match=r"deployment 'b/m': health_interval must be"):
        read_group("g", {"deployments": [{"spec": "b/m", "health_interval": "x"}]})


def test_close_of_a_sync_client_stops_a_probe_still_running(
    make_client: Any,
    router: Any,
    servers: tuple[WireServer, WireServer],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    east, west = servers
    client = make_client(
        router, COMPAT, config=config(east, west, east_weight=1000, health_interval="30s")
    )
    listing(west, delay=5.0)
    answer(east)
    started: list[asyncio.Task[Any]] = []
    real_start = Probes.start

    def start(self: Probes, checking: Any) -> None:
        real_start(self, checking)
        started.extend(self.tasks)

    monkeypatch.setattr(Probes, "start", start)
    assert client.complete("g", "hi").model == "east/m"
    assert len(started) == 1 and not started[0].done()  # its loop runs with calls only
    client.close()
    assert started[0].cancelled()
    assert "Task was destroyed" not in caplog.text
