"""The penalties against repetition on the wire: OpenAI's frequency_penalty and
presence_penalty go to every server; llama.cpp's repeat_penalty goes under each
server's own name, and where a server has no such field it is not sent and a Notice
says so."""

from __future__ import annotations

import pytest
from modelplug.contract.types import Notice, Request

DONE = [{"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}]
ASKED = Request(
    messages=[{"role": "user", "content": "hi"}],
    frequency_penalty=0.5,
    presence_penalty=-0.25,
    repeat_penalty=1.1,
)


def call(compat, wire_server, **provider):
    wire_server.add_sse(DONE, done=True)
    events = list(compat(**provider).stream("wire/m", ASKED))
    return wire_server.requests[-1].json(), [e for e in events if isinstance(e, Notice)]


@pytest.mark.parametrize(
    ("server", "name"),
    [
        ("llamacpp", "repeat_penalty"),
        ("lmstudio", "repeat_penalty"),
        ("vllm", "repetition_penalty"),
        ("openrouter", "repetition_penalty"),
        (None, "repeat_penalty"),
    ],
)
def test_every_penalty_is_sent_under_the_servers_name(compat, wire_server, server, name):
    provider = {"server": server} if server else {}
    body, notices = call(compat, wire_server, **provider)
    assert body["frequency_penalty"] == 0.5
    assert body["presence_penalty"] == -0.25
    assert body[name] == 1.1
    assert {"repeat_penalty", "repetition_penalty"} & set(body) == {name}
    assert notices == []


@pytest.mark.parametrize("server", ["openai", "ollama"])
def test_a_repeat_penalty_the_server_has_no_field_for_is_said_not_sent(compat, wire_server, server):
    body, notices = call(compat, wire_server, server=server)
    assert body["frequency_penalty"] == 0.5 and body["presence_penalty"] == -0.25
    assert "repeat_penalty" not in body and "repetition_penalty" not in body
    assert [n.kind for n in notices] == ["sampling_unsupported"]
    assert notices[0].details == {"fields": ["repeat_penalty"], "provider": "wire"}
    assert "repeat_penalty not sent" in notices[0].message


def test_no_penalty_asked_sends_none(compat, wire_server):
    wire_server.add_sse(DONE, done=True)
    events = list(compat(server="openai").stream("wire/m", "hi"))
    body = wire_server.requests[-1].json()
    assert not {"frequency_penalty", "presence_penalty", "repeat_penalty"} & set(body)
    assert not [e for e in events if isinstance(e, Notice)]
