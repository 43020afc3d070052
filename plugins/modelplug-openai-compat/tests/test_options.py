"""``[openai-compat]`` options: checked when a loop's HTTP client is made, not per call."""

from __future__ import annotations

import asyncio

import modelplug
import pytest
from modelplug import ConfigError, ModelplugWarning
from modelplug_openai_compat import http

ANSWER = [{"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"read_timeout": -1}, "[openai-compat] read_timeout: must be greater than 0, got -1"),
        ({"connect_timeout": "soon"}, "[openai-compat] connect_timeout: "),
    ],
)
def test_bad_options_raise_on_every_call_of_every_client(compat, wire_server, options, message):
    for client in (compat({"openai-compat": options}), compat({"openai-compat": options})):
        for _ in range(2):
            with pytest.raises(ConfigError) as caught:
                client.complete("wire/m", "hi")
            assert str(caught.value).startswith(message)
    assert wire_server.requests == []


def test_an_unknown_option_is_a_warning_naming_the_known_ones(compat, wire_server):
    wire_server.add_sse(ANSWER, done=True)
    client = compat({"openai-compat": {"read_timeout": 30, "retries": 3}})
    with pytest.warns(ModelplugWarning) as caught:
        assert client.complete("wire/m", "hi").text == "ok"
    assert "[openai-compat] has unknown option(s) retries" in str(caught[0].message)
    assert "read_timeout" in str(caught[0].message)


def test_options_are_read_once_per_client_and_used(compat, wire_server, monkeypatch):
    reads = []
    real = modelplug.read_options

    def counting(settings, section, record, **kwargs):
        if section == "openai-compat":
            reads.append(settings)
        return real(settings, section, record, **kwargs)

    monkeypatch.setattr(modelplug, "read_options", counting)
    client = compat({"openai-compat": {"read_timeout": 12}})

    async def three_calls_then_close():
        for _ in range(3):
            wire_server.add_sse(ANSWER, done=True)
            assert (await client.acomplete("wire/m", "hi")).text == "ok"
        pair = http.HTTP.shared(client)
        shared, options = pair.http, pair.options
        assert (shared.timeout.read, options.read_timeout) == (12.0, 12.0)
        await client.aclose()
        assert shared.is_closed

    asyncio.run(three_calls_then_close())
    assert reads == [client.settings]
