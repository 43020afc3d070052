"""modelplug_list_models: the models an OpenAI-compatible server lists, GET /v1/models."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from modelplug import ModelError

RECORDINGS = Path(__file__).parent / "recordings"


@pytest.mark.parametrize(
    ("recording", "models"),
    [
        ("llamacpp_models.json", ["gemma-3-4b-it"]),
        ("vllm_models.json", ["Qwen/Qwen3-8B", "qwen-lora"]),
    ],
)
def test_modelplug_list_models(compat, wire_server, recording, models):
    wire_server.add_file(RECORDINGS / recording, path="/v1/models", content_type="application/json")
    assert compat().list_models("wire") == models
    (asked,) = wire_server.requests
    assert (asked.method, asked.path) == ("GET", "/v1/models")


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_list_without_ids_is_an_empty_list(compat, wire_server):
    wire_server.add_json({"object": "list", "data": [{"object": "model"}, "x", {"id": ""}]})
    assert compat().list_models("wire") == []


def test_a_server_that_is_not_there_is_an_unreachable_error(compat, wire_server):
    client = compat(base_url=f"http://127.0.0.1:{closed_port()}/v1")
    with pytest.raises(ModelError) as caught:
        client.list_models("wire")
    assert caught.value.error_class.kind == "unreachable"
    assert wire_server.requests == []


def test_a_key_named_for_the_provider_is_sent_with_the_list_request(compat, wire_server):
    wire_server.add_json({"object": "list", "data": [{"id": "m"}]})
    client = compat(api_key_env="LAB_KEY", environ={"LAB_KEY": "sk-lab-0123456789abcdef"})
    assert client.list_models("wire") == ["m"]
    assert wire_server.requests[0].headers["authorization"] == "Bearer sk-lab-0123456789abcdef"
