"""A deployment that answers 429 or 503 on a real loopback server cools down, and the
call lands on another deployment of the group before any fallback chain is walked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from modelplug import ModelError
from modelplug_kit.testing import WireServer

RECORDING = Path(__file__).parent / "recordings" / "chat_ok.sse"
RATE_LIMITED = {"error": {"message": "Rate limit reached", "type": "requests"}}
UNAVAILABLE = {"error": {"message": "The server is overloaded", "type": "server_error"}}
COMPAT = "modelplug-openai-compat"

pytest.importorskip("modelplug_openai_compat", reason="the deployments are served through it")


def ok(server: WireServer) -> None:
    body = b"".join(
        line for line in RECORDING.read_bytes().splitlines(True) if not line.startswith(b"#")
    )
    server.add(body)


@pytest.mark.parametrize(("status", "payload"), [(429, RATE_LIMITED), (503, UNAVAILABLE)])
def test_a_refused_call_lands_on_another_deployment_and_the_refuser_cools(
    kit: Any,
    make_client: Any,
    router: Any,
    clock: Any,
    servers: tuple[WireServer, WireServer],
    status: int,
    payload: dict[str, Any],
) -> None:
    east, west = servers
    client = make_client(router, COMPAT, config=kit.two_servers(east, west))
    east.add_json(payload, status=status)
    ok(west)
    seen: list[Any] = []
    # Weighted with equal weights: the first call goes to east, which refuses it.
    response = client.complete("g", "hi", on_event=seen.append)
    assert response.model == "west/m" and response.text == "ok"
    assert len(east.requests) == 1 and len(west.requests) == 1
    handed = [e for e in seen if e.type == "notice" and e.kind == "fallback"]
    assert handed and handed[0].details["to"] == "west/m"
    assert "east/m failed" in handed[0].message and "30 s" in handed[0].message
    # East cools down for [fallback] cooldown_rate_limit: every call goes west meanwhile.
    for _ in range(3):
        ok(west)
        assert client.complete("g", "hi").model == "west/m"
    assert len(east.requests) == 1
    # Once its cooldown is over, east takes its share again.
    clock.now += 31
    ok(east)
    ok(west)
    models = {client.complete("g", "hi").model for _ in range(2)}
    assert models == {"east/m", "west/m"}


def test_a_bad_request_is_not_handed_over(
    kit: Any, make_client: Any, router: Any, servers: tuple[WireServer, WireServer]
) -> None:
    east, west = servers
    client = make_client(router, COMPAT, config=kit.two_servers(east, west))
    east.add_json({"error": {"message": "messages: invalid", "type": "invalid"}}, status=400)
    with pytest.raises(ModelError) as raised:
        client.complete("g", "hi")
    assert raised.value.kind == "bad_request"
    assert len(west.requests) == 0


def test_the_groups_fallback_chain_comes_after_every_deployment(
    kit: Any, make_client: Any, router: Any, servers: tuple[WireServer, WireServer]
) -> None:
    east, west = servers
    spare = WireServer().start()
    try:
        settings = kit.two_servers(east, west)
        settings["providers"]["spare"] = {
            "type": "openai-compatible",
            "base_url": spare.url + "/v1",
        }
        settings["fallbacks"] = {"g": ["spare/m"]}
        settings["fallback"]["retries"] = 0
        client = make_client(router, COMPAT, "modelplug-fallback", config=settings)
        east.add_json(RATE_LIMITED, status=429)
        west.add_json(UNAVAILABLE, status=503)
        ok(spare)
        response = client.complete("g", "hi")
        assert response.model == "spare/m"
        assert (len(east.requests), len(west.requests), len(spare.requests)) == (1, 1, 1)
    finally:
        spare.stop()


def test_one_deployment_of_three_refusing_every_call_fails_no_call(
    kit: Any,
    make_client: Any,
    router: Any,
    servers: tuple[WireServer, WireServer],
    clock: Any,
) -> None:
    east, west = servers
    third = WireServer().start()
    try:
        settings = kit.two_servers(east, west)
        settings["providers"]["third"] = {
            "type": "openai-compatible",
            "base_url": third.url + "/v1",
        }
        settings["groups"]["g"]["deployments"].append("third/m")
        client = make_client(router, COMPAT, config=settings)
        for _ in range(30):
            east.add_json(RATE_LIMITED, status=429)
            ok(west)
            ok(third)
        models = []
        for _ in range(20):
            models.append(client.complete("g", "hi").model)
            clock.now += 10  # east's cooldown (30 s) ends now and then: it is tried again
        assert "east/m" not in models and len(models) == 20
        assert 1 < len(east.requests) < 20
    finally:
        third.stop()
