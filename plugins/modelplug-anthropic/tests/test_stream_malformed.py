"""Input the API would never send ends in a classified error that says what was wrong
(or, for variants real servers have, in the right Response): never a stray exception."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from modelplug import Client, ModelError
from modelplug.contract.types import TextDelta
from modelplug_kit.testing import WireServer

MakeClient = Callable[..., Client]
Recording = Callable[[str], Path]
SPEC = "anthropic/claude-sonnet-4-6"


def failure(client: Client) -> tuple[ModelError, str]:
    shown: list[str] = []
    with pytest.raises(ModelError) as caught:
        for event in client.stream(SPEC, "hi"):
            if isinstance(event, TextDelta):
                shown.append(event.text)
    return caught.value, "".join(shown)


def test_modelplug_stream_html_200_says_it_is_not_an_event_stream(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("login_portal.html"), content_type="text/html; charset=utf-8")
    error, _ = failure(claude_client())
    assert "the server answered text/html, not an event stream; check base_url" in str(error)
    # Where it went, not what the page said (a proxy's page may quote what it refused).
    assert f"anthropic at {wire_server.url}:" in str(error)
    assert "Sign in" not in str(error)
    # The same request would get the same page: no retry, but another model may answer.
    assert error.kind == "other"
    assert not error.retryable and error.error_class.fallback


def test_modelplug_stream_html_labelled_as_event_stream_is_named_too(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    page = recording("login_portal.html").read_bytes().split(b"\n", 1)[1]
    wire_server.add(page)
    error, _ = failure(claude_client())
    assert "the server answered text/html, not an event stream" in str(error)
    assert error.kind == "other" and not error.retryable


def test_modelplug_stream_malformed_json_event_is_transient_and_quoted(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("malformed_json_event.sse"))
    error, shown = failure(claude_client())
    assert error.kind == "transient" and error.retryable
    assert "an event that is not JSON" in str(error)
    assert '"type":"text_del' in str(error)
    assert error.partial is not None and error.partial.text == shown == "Before the break"


@pytest.mark.parametrize(
    ("events", "said"),
    [
        ([{"type": "content_block_start", "index": 0}], "before message_start"),
        (["start", {"type": "content_block_delta", "index": 3, "delta": {}}], "never started"),
        (["start", "text", "stop", "delta"], "after its content_block_stop"),
        (["start", "text", "text"], "a second content_block_start for block 0"),
        (
            [
                "start",
                {"type": "content_block_start", "index": 2, "content_block": {"type": "text"}},
                "text",
            ],
            "a content_block_start for block 0 after block 2",
        ),
        (["start", "text", {"type": "content_block_delta", "index": 0, "delta": 5}], "delta is"),
        (["start", {"type": "content_block_start", "index": -1, "content_block": {}}], "index"),
        (["start", "[1, 2]"], "an event that is not a JSON object"),
        (["start", {"index": 0}], "an event without a type"),
        (["start", "tool", "delta"], "a text_delta for block 0, a tool_use block"),
        (
            [
                "start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "tool_use", "id": "t", "name": ""},
                },
            ],
            "without a string id and name",
        ),
    ],
)
def test_modelplug_stream_out_of_order_and_wrong_events_are_classified(
    claude_client: MakeClient, wire_server: WireServer, events: list[object], said: str
) -> None:
    named = {
        "start": {"type": "message_start", "message": {"id": "msg_x", "usage": {}}},
        "text": {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
        "tool": {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_x", "name": "f", "input": {}},
        },
        "stop": {"type": "content_block_stop", "index": 0},
        "delta": {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "x"},
        },
    }
    lines = [json.dumps(named[e]) if isinstance(e, str) and e in named else e for e in events]
    wire_server.add_sse([e if isinstance(e, str) else json.dumps(e) for e in lines])
    error, _ = failure(claude_client())
    assert error.kind == "transient"
    assert said in str(error)


def test_modelplug_stream_proxy_error_frame_is_a_classified_error_with_partial(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("proxy_error_frame.sse"))
    error, shown = failure(claude_client())
    assert "stream_error" in str(error) and "upstream connection reset" in str(error)
    assert error.kind == "transient" and error.retryable
    assert error.partial is not None and error.partial.text == shown == "Partial answer"


def test_modelplug_stream_data_only_frames_are_read_by_their_json_type(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("basic_data_only.sse"))
    response = claude_client().complete(SPEC, "hi")
    assert response.text == "Hello there!"
    assert (response.usage.input, response.usage.output) == (11, 6)


def test_modelplug_stream_whole_json_message_is_read_as_its_stream(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    # A server that ignored stream=true answers one Message object.
    message = json.loads(recording("thinking_message.json").read_text().split("\n", 1)[1])
    wire_server.add_json(message)
    events = list(claude_client().stream("anthropic/claude-opus-5", "2+2?"))
    response = events[-1].response  # type: ignore[union-attr]
    assert response.text == "".join(e.text for e in events if isinstance(e, TextDelta))
    assert response.message.content[0].type == "thinking"


def test_modelplug_stream_json_error_body_after_200_is_classified(
    claude_client: MakeClient, wire_server: WireServer
) -> None:
    wire_server.add_json(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    error, _ = failure(claude_client())
    assert error.kind == "overloaded" and error.retryable
