"""A stream that ends before the server said it was done is a transient error carrying
the partial output; one that said so (message_stop, or a stop reason) is complete."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from modelplug import Client, ModelError
from modelplug.contract.types import TextDelta
from modelplug_kit.testing import WireServer, load_recording

MakeClient = Callable[..., Client]
Recording = Callable[[str], Path]
SPEC = "anthropic/claude-sonnet-4-6"


def failure(client: Client) -> tuple[ModelError, list[str]]:
    shown: list[str] = []
    with pytest.raises(ModelError) as caught:
        for event in client.stream(SPEC, "hi"):
            if isinstance(event, TextDelta):
                shown.append(event.text)
    return caught.value, shown


def test_modelplug_stream_clean_close_after_deltas_is_transient_with_partial(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("ends_after_deltas.sse"))
    error, shown = failure(claude_client())
    assert error.kind == "transient"
    assert error.retryable and error.error_class.fallback
    assert "ended before message_stop" in str(error)
    assert error.partial is not None
    assert error.partial.text == "".join(shown) == "The three steps are: first, measure; second,"
    assert error.partial.stop_reason == "other"


def test_modelplug_stream_close_after_message_start_alone_is_transient(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("ends_after_message_start.sse"))
    error, shown = failure(claude_client())
    assert error.kind == "transient" and error.retryable
    assert "ended before message_stop" in str(error)
    assert shown == []
    assert error.partial is None


def test_modelplug_stream_empty_200_body_is_transient_and_says_so(
    claude_client: MakeClient, wire_server: WireServer
) -> None:
    wire_server.add(b"")
    error, _ = failure(claude_client())
    assert error.kind == "transient" and error.retryable
    assert "empty body" in str(error)


def test_modelplug_stream_dropped_connection_mid_stream_keeps_partial(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    data = load_recording(recording("text.sse"))
    cut = data.index(b"event: content_block_delta", data.index(b"Hello"))
    wire_server.add([data[:cut], data[cut:]], drop_after=1)
    error, shown = failure(claude_client())
    assert error.kind == "transient" and error.retryable
    assert error.partial is not None and error.partial.text == "".join(shown) == "Hello"


def test_modelplug_stream_stop_reason_without_message_stop_is_complete(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("no_message_stop.sse"))
    response = claude_client().complete(SPEC, "hi")
    assert response.text == "All done."
    assert response.stop_reason == "end_turn"
    assert (response.usage.input, response.usage.output) == (9, 4)


def test_modelplug_stream_stops_reading_at_message_stop(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    # A gateway that keeps the body open after message_stop (earendil-works/pi#5592):
    # whatever comes after it is never read, so this junk cannot fail the call.
    data = load_recording(recording("text.sse"))
    wire_server.add([data, (0.5, b"data: not json at all\n\n")])
    assert claude_client().complete(SPEC, "hi").text == "Hello, world!"
