"""A send that fails before any byte of an answer (a dead keep-alive connection) is made
again once, at once, with no notice."""

from __future__ import annotations

import pytest
from modelplug import ModelError
from modelplug.contract.types import Notice

ANSWER = [{"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}]


def test_a_connection_closed_without_an_answer_is_resent_once(compat, wire_server):
    wire_server.add(b"", hang_up=True)
    wire_server.add_sse(ANSWER, done=True)
    events = list(compat().stream("wire/m", "hi"))
    assert events[-1].response.text == "ok"
    assert not [e for e in events if isinstance(e, Notice)]
    assert len(wire_server.requests) == 2
    assert wire_server.requests[0].body == wire_server.requests[1].body


def test_back_to_back_calls_after_a_hang_up_all_answer(compat, wire_server):
    client = compat()
    for _ in range(3):
        wire_server.add(b"", hang_up=True)
        wire_server.add_sse(ANSWER, done=True)
        assert client.complete("wire/m", "hi").text == "ok"
    assert len(wire_server.requests) == 6


def test_a_second_hang_up_is_a_transient_error_not_a_third_try(compat, wire_server):
    wire_server.add(b"", hang_up=True)
    wire_server.add(b"", hang_up=True)
    with pytest.raises(ModelError) as caught:
        list(compat().stream("wire/m", "hi"))
    assert caught.value.error_class.kind == "transient"
    assert "RemoteProtocolError" in str(caught.value)
    assert len(wire_server.requests) == 2


def test_a_drop_after_the_answer_began_is_not_resent(compat, wire_server):
    wire_server.add(
        [b'data: {"choices": [{"delta": {"content": "par"}}]}\n\n', b"never sent"], drop_after=1
    )
    with pytest.raises(ModelError) as caught:
        list(compat().stream("wire/m", "hi"))
    assert caught.value.partial is not None and caught.value.partial.text == "par"
    assert len(wire_server.requests) == 1
