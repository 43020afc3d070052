"""Embedding calls and transcriptions on a group are balanced as streams are: real
loopback servers behind modelplug-openai-compat, each answer naming the deployment that
gave it; a refusal (429) cools the deployment and the call lands on another; a 400 is
the caller's and is not handed over; every deployment refusing ends in the last error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from modelplug import ModelError
from modelplug_kit.testing import WireServer

COMPAT = "modelplug-openai-compat"
pytest.importorskip("modelplug_openai_compat", reason="the deployments are served through it")

RECORDINGS = Path(__file__).parent / "recordings"
EMBEDDINGS = RECORDINGS / "openai_embeddings.json"
TRANSCRIPT = RECORDINGS / "openai_transcription.json"
RATE_LIMITED = {"error": {"message": "Rate limit reached", "type": "requests"}}
BAD_REQUEST = {"error": {"message": "input is too long", "type": "invalid_request_error"}}


def test_embedding_calls_are_spread_over_the_deployments_by_weight(
    kit: Any, make_client: Any, router: Any, servers: tuple[WireServer, WireServer]
) -> None:
    east, west = servers
    deployments = [{"spec": "east/m", "weight": 3}, {"spec": "west/m", "weight": 1}]
    client = make_client(
        router, COMPAT, config=kit.two_servers(east, west, deployments=deployments)
    )
    for _ in range(3):
        east.add_file(EMBEDDINGS)
    west.add_file(EMBEDDINGS)
    answered = [client.embed("g", "The food was delicious.") for _ in range(4)]
    assert sorted(e.model or "" for e in answered) == ["east/m", "east/m", "east/m", "west/m"]
    assert (len(east.requests), len(west.requests)) == (3, 1)
    assert all(e.vectors == [[0.0023064255, -0.009327292, -0.0028842222]] for e in answered)
    assert answered[0].route is not None and answered[0].route.name in ("east/m", "west/m")
    assert east.requests[0].path == "/v1/embeddings"


def test_a_refused_embedding_call_lands_on_another_deployment_and_the_refuser_cools(
    kit: Any, make_client: Any, router: Any, clock: Any, servers: tuple[WireServer, WireServer]
) -> None:
    east, west = servers
    client = make_client(router, COMPAT, config=kit.two_servers(east, west))
    east.add_json(RATE_LIMITED, status=429)
    west.add_file(EMBEDDINGS)
    assert client.embed("g", "hi").model == "west/m"  # east, picked first, refused it
    for _ in range(2):
        west.add_file(EMBEDDINGS)
        assert client.embed("g", "hi").model == "west/m"  # east cools down for 30 s
    assert len(east.requests) == 1
    clock.now += 31
    east.add_file(EMBEDDINGS)
    west.add_file(EMBEDDINGS)
    assert {client.embed("g", "hi").model for _ in range(2)} == {"east/m", "west/m"}


def test_a_bad_embedding_request_is_the_callers_and_is_not_handed_over(
    kit: Any, make_client: Any, router: Any, servers: tuple[WireServer, WireServer]
) -> None:
    east, west = servers
    client = make_client(router, COMPAT, config=kit.two_servers(east, west))
    east.add_json(BAD_REQUEST, status=400)
    with pytest.raises(ModelError, match="input is too long"):
        client.embed("g", "hi")
    assert (len(east.requests), len(west.requests)) == (1, 0)


def test_when_every_deployment_refuses_the_last_refusal_is_the_error(
    kit: Any, make_client: Any, router: Any, servers: tuple[WireServer, WireServer]
) -> None:
    east, west = servers
    client = make_client(router, COMPAT, config=kit.two_servers(east, west))
    east.add_json(RATE_LIMITED, status=429)
    west.add_json(RATE_LIMITED, status=429)
    with pytest.raises(ModelError) as caught:
        client.embed("g", "hi")
    assert caught.value.error_class.kind == "rate_limit"
    assert (len(east.requests), len(west.requests)) == (1, 1)


def test_a_transcription_on_a_group_is_handed_over_too(
    kit: Any, make_client: Any, router: Any, servers: tuple[WireServer, WireServer]
) -> None:
    east, west = servers
    client = make_client(router, COMPAT, config=kit.two_servers(east, west))
    east.add_json(RATE_LIMITED, status=429)
    west.add_file(TRANSCRIPT)
    transcript = client.transcribe("g", b"RIFF....WAVEfmt ", filename="note.wav")
    assert transcript.model == "west/m"
    assert transcript.text.startswith("Imagine the wildest idea")
    assert west.requests[0].path == "/v1/audio/transcriptions"
    assert len(east.requests) == 1


def test_modelplug_embed_of_the_installed_plugin_balances_a_group(
    kit: Any, make_client: Any, servers: tuple[WireServer, WireServer]
) -> None:
    # The entry point's default policy (its state in this machine's SQLite file); its
    # first pick is whichever its round robin is at, so east refuses whenever asked.
    east, west = servers
    client = make_client(COMPAT, "modelplug-router", config=kit.two_servers(east, west))
    east.add_json(RATE_LIMITED, status=429)
    west.add_file(EMBEDDINGS)
    assert client.embed("g", "hi").model == "west/m"
    assert len(east.requests) <= 1 and len(west.requests) == 1
    asked = len(east.requests)
    east.add_file(EMBEDDINGS)
    assert client.embed("east/m", "hi").model == "east/m"  # a plain route: untouched
    assert len(east.requests) == asked + 1


def test_modelplug_transcribe_of_the_installed_plugin_balances_a_group(
    kit: Any, make_client: Any, servers: tuple[WireServer, WireServer]
) -> None:
    east, west = servers
    client = make_client(COMPAT, "modelplug-router", config=kit.two_servers(east, west))
    east.add_json(RATE_LIMITED, status=429)
    west.add_file(TRANSCRIPT)
    assert client.transcribe("g", b"RIFF....WAVEfmt ", filename="a.wav").model == "west/m"
    assert len(east.requests) <= 1 and len(west.requests) == 1
