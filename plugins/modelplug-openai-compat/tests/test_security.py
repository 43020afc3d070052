"""Keys: sent only as Authorization when there is one, never in errors or reprs."""

from __future__ import annotations

import pytest
from modelplug import MissingKeyError, ModelError

DONE = [{"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}]


def test_no_authorization_header_without_a_key(compat, wire_server):
    wire_server.add_sse(DONE, done=True)
    compat().complete("wire/m", "hi")
    assert "authorization" not in wire_server.requests[-1].headers


def test_bearer_key_and_user_headers_are_sent(compat, wire_server, planted_key):
    wire_server.add_sse(DONE, done=True)
    client = compat(
        api_key_env="PLANTED_API_KEY",
        headers={"X-Team": "infra"},
        environ={"PLANTED_API_KEY": planted_key},
    )
    client.complete("wire/m", "hi")
    headers = wire_server.requests[-1].headers
    assert headers["authorization"] == f"Bearer {planted_key}"
    assert headers["x-team"] == "infra"


def test_the_key_never_appears_in_errors_or_reprs(compat, wire_server, planted_key):
    # A server that echoes the key back, as some do on a 401.
    wire_server.add_json(
        {"error": {"message": f"Incorrect API key provided: {planted_key}"}}, status=401
    )
    client = compat(api_key_env="PLANTED_API_KEY", environ={"PLANTED_API_KEY": planted_key})
    with pytest.raises(ModelError) as caught:
        client.complete("wire/m", "hi")
    error = caught.value
    assert error.kind == "auth"
    assert "Incorrect API key provided" in str(error)
    for text in (
        str(error),
        repr(error),
        repr(error.route),
        repr(client.resolve("wire/m")),
        repr(client),
        str(error.body),
        str(error.headers),
    ):
        assert planted_key not in text


def test_a_missing_key_names_the_variable(compat, wire_server):
    # Not on this machine: the preset's key variable applies (a loopback one needs none).
    client = compat(name="openrouter", base_url="https://openrouter.ai/api/v1")
    with pytest.raises(
        MissingKeyError, match=r"Set OPENROUTER_API_KEY to use the provider openrouter\."
    ):
        client.complete("openrouter/qwen/qwen3-coder", "hi")
    assert wire_server.requests == []  # nothing was sent
