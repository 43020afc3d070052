"""A pooled keep-alive connection the server had already closed (llama.cpp's server
closes its connection after every stream while its headers say keep-alive) is resent
once, at once, with no Notice; a drop after the answer began is not resent."""

from __future__ import annotations

import pytest
from modelplug import ModelError
from modelplug.contract.types import Notice

TEXT = "The final result is **570**."  # the answer text.sse carries


def test_a_dead_pooled_connection_is_resent_once_without_a_notice(
    responses, wire_server, wire, recorded
):
    client = responses()
    wire_server.add_file(recorded / "text.sse")
    wire.run(client)  # leaves its connection in the pool
    before = wire_server.connections
    wire_server.add(b"", hang_up=True)  # the pooled connection, closed at the server
    wire_server.add_file(recorded / "text.sse")
    events, response = wire.run(client)
    assert response.text == TEXT
    assert not [e for e in events if isinstance(e, Notice)]
    # The second call went out twice: on the pooled connection, then on a new one.
    assert len(wire_server.requests) == 3
    assert wire_server.requests[1].body == wire_server.requests[2].body
    assert wire_server.connections - before == 1


def test_back_to_back_calls_to_a_server_that_closes_after_every_stream_all_answer(
    responses, wire_server, wire, recorded
):
    client = responses()
    for _ in range(10):
        wire_server.add(b"", hang_up=True)
        wire_server.add_file(recorded / "text.sse")
        events, response = wire.run(client)
        assert response.text == TEXT
        assert not [e for e in events if isinstance(e, Notice)]
    assert len(wire_server.requests) == 20


def test_a_second_hang_up_is_a_transient_error_not_a_third_try(responses, wire_server):
    wire_server.add(b"", hang_up=True)
    wire_server.add(b"", hang_up=True)
    with pytest.raises(ModelError) as caught:
        list(responses().stream("wire/gpt-5", "hi"))
    assert (caught.value.error_class.kind, caught.value.error_class.retryable) == (
        "transient",
        True,
    )
    assert "RemoteProtocolError" in str(caught.value)
    assert len(wire_server.requests) == 2


def test_a_drop_after_the_answer_began_is_not_resent(responses, wire_server, wire):
    events = wire.recorded_events("text.sse")[:6]  # created ... the first text delta
    sent = wire_server.add_sse(events, event_names=True)
    # Reset after a pause, so the events sent before the reset are read, not discarded.
    sent.chunks.append((0.3, b""))
    sent.drop_after = len(sent.chunks)
    with pytest.raises(ModelError) as caught:
        list(responses().stream("wire/gpt-5", "hi"))
    shown = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert shown and caught.value.partial is not None and caught.value.partial.text == shown
    assert "dropped mid-stream" in str(caught.value)
    assert len(wire_server.requests) == 1
