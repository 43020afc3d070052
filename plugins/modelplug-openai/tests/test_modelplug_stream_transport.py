"""What goes on the wire besides the body: the key's header (Bearer, or Azure's
``api-key``), the configured headers; a missing key fails before anything is sent."""

from __future__ import annotations

import modelplug_openai
import pytest
from modelplug import MissingKeyError


def test_modelplug_stream_sends_the_key_as_bearer(responses, wire_server, wire, recorded):
    wire_server.add_file(recorded / "text.sse")
    wire.run(responses(headers={"X-Team": "a", "Authorization": "Bearer other"}))
    headers = wire_server.requests[0].headers
    assert headers["authorization"] == f"Bearer {wire.KEY}"
    assert headers["x-team"] == "a"
    assert "api-key" not in headers


def test_modelplug_stream_sends_azures_api_key_header(responses, wire_server, wire, recorded):
    wire_server.add_file(recorded / "text.sse")
    wire.run(responses(server="azure"))
    headers = wire_server.requests[0].headers
    assert headers["api-key"] == wire.KEY
    assert "authorization" not in headers


def test_modelplug_stream_without_a_key_fails_before_sending(responses, wire_server):
    client = responses(environ={})
    with pytest.raises(MissingKeyError, match="WIRE_KEY"):
        list(client.stream("wire/gpt-5", "hi"))
    assert wire_server.requests == []


def test_modelplug_stream_leaves_other_types_alone(make_client):
    client = make_client("modelplug-openai", entry_points=True)
    route = client.resolve("openai/gpt-5")
    other = type(route)(provider="lab", model="m")
    assert modelplug_openai.modelplug_stream(other, None, client) is None
