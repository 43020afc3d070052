"""The kit's timeouts under ``[openai]``: a wait for the answer's headers ends at
first_byte_timeout, a silence mid-stream at read_timeout (with the output so far), and
each error names the setting that ended it."""

from __future__ import annotations

import pytest
from modelplug import ConfigError, ModelError


def fail(client):
    with pytest.raises(ModelError) as caught:
        list(client.stream("wire/gpt-5", "hi"))
    return caught.value


def test_a_stall_before_the_headers_names_first_byte_timeout(responses, wire_server, recorded):
    # The answer would come 30 s later: what ends the call is the timeout the error names.
    wire_server.add_file(recorded / "text.sse", stall=30.0)
    error = fail(responses({"openai": {"first_byte_timeout": 0.5}}))
    assert (error.error_class.kind, error.error_class.retryable) == ("transient", True)
    assert error.partial is None
    assert "sent no answer within 0.5 s (first_byte_timeout in [openai])" in str(error)
    # The request went out once: the wait was for its answer, and it was not resent.
    assert len(wire_server.requests) == 1
    wire_server.stopping.set()  # release the server thread waiting out its stall


def test_a_stall_mid_stream_names_read_timeout_and_keeps_the_text(responses, wire_server, wire):
    events = wire.recorded_events("text.sse")
    first = 6  # created ... the first text delta
    sent = wire_server.add_sse(events, event_names=True)
    sent.chunks[first] = (30.0, sent.chunks[first])  # the rest would come 30 s later
    error = fail(responses({"openai": {"read_timeout": 0.5}}))
    assert (error.error_class.kind, error.error_class.retryable) == ("transient", True)
    assert "sent nothing for 0.5 s (read_timeout in [openai]); the server stalled" in str(error)
    shown = "".join(e["delta"] for e in events[:first] if e["type"] == "response.output_text.delta")
    assert shown and error.partial is not None and error.partial.text == shown
    wire_server.stopping.set()


def test_first_byte_timeout_is_checked_like_the_others(responses):
    with pytest.raises(ConfigError, match="first_byte_timeout"):
        list(responses({"openai": {"first_byte_timeout": 0}}).stream("wire/gpt-5", "hi"))
