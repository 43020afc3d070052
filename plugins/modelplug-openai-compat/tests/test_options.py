"""``[openai-compat]`` options: checked when a loop's HTTP client is made, not per call."""

from __future__ import annotations

import asyncio

import pytest
from modelplug.errors import ConfigError
from modelplug_openai_compat import http

ANSWER = [{"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"read_timeout": -1},
            "[openai-compat] read_timeout must be a positive number of seconds, got -1",
        ),
        ({"retries": 3}, "[openai-compat] unknown option(s) retries"),
    ],
)
def test_bad_options_raise_on_every_call_of_every_client(compat, wire_server, options, message):
    for client in (compat({"openai-compat": options}), compat({"openai-compat": options})):
        for _ in range(2):
            with pytest.raises(ConfigError) as caught:
                client.complete("wire/m", "hi")
            assert str(caught.value).startswith(message)
    assert wire_server.requests == []


def test_options_are_read_once_per_client_and_used(compat, wire_server, monkeypatch):
    reads = []
    real = http.options_of

    def counting(client):
        reads.append(client)
        return real(client)

    monkeypatch.setattr(http, "options_of", counting)
    client = compat({"openai-compat": {"read_timeout": 12}})

    async def three_calls_then_close():
        for _ in range(3):
            wire_server.add_sse(ANSWER, done=True)
            assert (await client.acomplete("wire/m", "hi")).text == "ok"
        shared, options = http.shared_http(client)
        assert (shared.timeout.read, options.read_timeout) == (12.0, 12.0)
        await client.aclose()
        assert shared.is_closed

    asyncio.run(three_calls_then_close())
    assert reads == [client]
