"""A send that fails before any byte of an answer (a pooled keep-alive connection the
server had closed) is made again once, at once, with no Notice; nothing else is."""

from __future__ import annotations

import pytest
from modelplug import ModelError
from modelplug.contract.types import Notice


def test_a_pooled_connection_closed_without_an_answer_is_resent_once(ollama, wire):
    client = ollama()
    wire.chat("text.jsonl")
    client.complete("ollama/gemma2:2b", "hi")  # leaves its connection in the pool
    before = wire.server.connections
    wire.server.add(b"", hang_up=True, path="/api/chat")
    wire.chat("text.jsonl")
    events = list(client.stream("ollama/gemma2:2b", "again"))
    assert events[-1].response.text.startswith("Hello!")
    assert not [e for e in events if isinstance(e, Notice)]
    # The hung-up request went out on the pooled connection, its resend on a new one.
    assert [r.path for r in wire.requests] == ["/api/chat"] * 3
    assert wire.requests[1].body == wire.requests[2].body
    assert wire.server.connections - before == 1


def test_a_second_hang_up_is_a_transient_error_not_a_third_try(ollama, wire):
    wire.server.add(b"", hang_up=True, path="/api/chat")
    wire.server.add(b"", hang_up=True, path="/api/chat")
    with pytest.raises(ModelError) as caught:
        ollama().complete("ollama/m", "hi")
    assert caught.value.error_class.kind == "transient"
    assert caught.value.error_class.retryable is True
    assert "RemoteProtocolError" in str(caught.value)
    assert len(wire.requests) == 2


def test_a_drop_after_the_answer_began_is_not_resent(ollama, wire):
    wire.chat("text.jsonl", drop_after=1)
    with pytest.raises(ModelError) as caught:
        ollama().complete("ollama/gemma2:2b", "hi")
    assert caught.value.partial is not None
    assert caught.value.partial.text == "Hello"
    assert len(wire.requests) == 1
