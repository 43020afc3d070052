"""modelplug_list_models: the models an Ollama server has pulled, GET /api/tags."""

from __future__ import annotations

import socket

import pytest
from modelplug import ModelError


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_modelplug_list_models(ollama, wire):
    wire.answer("tags.json", "/api/tags")
    assert ollama().list_models("ollama") == ["qwen3:8b", "gemma3:4b"]
    (asked,) = wire.requests
    assert (asked.method, asked.path) == ("GET", "/api/tags")


def test_an_ollama_with_nothing_pulled_lists_nothing(ollama, wire_server):
    wire_server.add_json({"models": []}, path="/api/tags")
    assert ollama().list_models("ollama") == []


def test_an_ollama_that_is_not_running_is_an_unreachable_error(ollama):
    with pytest.raises(ModelError) as caught:
        ollama(base_url=f"http://127.0.0.1:{closed_port()}").list_models("ollama")
    assert caught.value.error_class.kind == "unreachable"
