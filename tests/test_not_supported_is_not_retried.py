"""An upstream that says it cannot do what was asked (llama-server started without
``--embeddings`` answers 501) says the same on every try: the call fails at once with
the server's own words, one request sent, no retry wait and no fallback."""

from __future__ import annotations

from typing import Any

import pytest
from modelplug.contract.errors import ModelError
from modelplug_fallback.policy import default_policy
from modelplug_kit.testing import WireServer

pytest.importorskip("modelplug_openai_compat")
pytest.importorskip("modelplug_fallback")

# llama.cpp server's error body for ERROR_TYPE_NOT_SUPPORTED (format_error_response),
# with the words of the bug report (issue 43, item 3).
NO_EMBEDDINGS = {
    "error": {
        "code": 501,
        "message": "This server does not support embeddings. Start it with `--embeddings`",
        "type": "not_supported_error",
    }
}


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The retry waits the fallback policy asked for (none is really slept)."""
    asked: list[float] = []

    async def sleep(seconds: float) -> None:
        asked.append(seconds)

    monkeypatch.setattr(default_policy(), "sleep", sleep)
    return asked


def answer_501_every_time(server: WireServer) -> None:
    for _ in range(6):
        server.add_json(NO_EMBEDDINGS, status=501)


def client_of(make_client: Any, server: WireServer) -> Any:
    local = {"type": "openai-compatible", "base_url": server.url + "/v1", "server": "llamacpp"}
    config = {
        "providers": {"local": local, "other": local},
        "fallbacks": {"local/any": ["other/any"]},
    }
    return make_client("modelplug-fallback", "modelplug-openai-compat", config=config, environ={})


def test_a_501_embedding_refusal_is_sent_once_and_not_retried(
    make_client: Any, wire_server: WireServer, waits: list[float]
) -> None:
    answer_501_every_time(wire_server)
    client = client_of(make_client, wire_server)

    with pytest.raises(ModelError) as caught:
        client.embed("local/any", ["hello"])

    assert len(wire_server.requests) == 1
    error = caught.value
    assert (error.error_class.retryable, error.error_class.fallback) == (False, False)
    assert error.error_class.kind == "bad_request"
    assert "Start it with `--embeddings`" in str(error)
    assert waits == []


def test_a_501_chat_refusal_is_sent_once_and_not_retried(
    make_client: Any, wire_server: WireServer, waits: list[float]
) -> None:
    answer_501_every_time(wire_server)
    client = client_of(make_client, wire_server)

    with pytest.raises(ModelError) as caught:
        client.complete("local/any", "hi")

    assert len(wire_server.requests) == 1
    assert caught.value.error_class.retryable is False
    assert waits == []
