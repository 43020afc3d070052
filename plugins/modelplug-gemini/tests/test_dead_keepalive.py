"""A pooled keep-alive connection the server had already closed is resent once, at
once, with no Notice (no backoff, no retry by a policy); a drop after the answer began
is not resent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from modelplug import ModelError
from modelplug.client.client import Client
from modelplug.contract.types import Done, Notice
from modelplug_kit.testing import WireServer

TEXT_END = "5.  **Italian:** Ciao"  # how the answer in text.sse ends
SPEC = "gemini/gemini-2.5-flash"


def test_a_dead_pooled_connection_is_resent_once_without_a_notice(
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
    recorded: Callable[[str], Path],
) -> None:
    client = gemini_client()
    wire_server.add_file(recorded("text.sse"))
    client.complete(SPEC, "hi")  # leaves its connection in the pool
    wire_server.add(b"", hang_up=True)  # the pooled connection, closed at the server
    wire_server.add_file(recorded("text.sse"))
    events = list(client.stream(SPEC, "hi"))
    assert isinstance(events[-1], Done) and events[-1].response.text.endswith(TEXT_END)
    assert not [e for e in events if isinstance(e, Notice)]
    # The second call went out twice, the same bytes: on the pooled connection (which
    # the server closed unanswered), then on one new connection.
    first, dead, resent = wire_server.requests
    assert dead.body == resent.body
    assert dead.connection == first.connection != resent.connection


def test_a_hang_up_on_a_new_connection_is_resent_too(
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
    recorded: Callable[[str], Path],
) -> None:
    wire_server.add(b"", hang_up=True)
    wire_server.add_file(recorded("text.sse"))
    events = list(gemini_client().stream(SPEC, "hi"))
    assert events[-1].response.text.endswith(TEXT_END)
    assert not [e for e in events if isinstance(e, Notice)]
    assert [r.path for r in wire_server.requests] == [
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    ] * 2


def test_a_second_hang_up_is_a_transient_error_not_a_third_try(
    gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    wire_server.add(b"", hang_up=True)
    wire_server.add(b"", hang_up=True)
    with pytest.raises(ModelError) as caught:
        list(gemini_client().stream(SPEC, "hi"))
    error = caught.value
    assert (error.error_class.kind, error.error_class.retryable) == ("transient", True)
    assert "RemoteProtocolError" in str(error)
    assert len(wire_server.requests) == 2


def test_a_drop_after_the_answer_began_is_not_resent(
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
    recorded: Callable[[str], Path],
) -> None:
    wire_server.add_file(recorded("text.sse"), drop_after=1)
    with pytest.raises(ModelError) as caught:
        list(gemini_client().stream(SPEC, "hi"))
    assert caught.value.partial is not None
    assert caught.value.partial.text.startswith("Here you go!")
    assert "dropped mid-stream" in str(caught.value)
    assert len(wire_server.requests) == 1
