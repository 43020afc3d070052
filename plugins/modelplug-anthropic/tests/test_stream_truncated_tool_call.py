"""max_tokens in the middle of a tool call's JSON never yields a dispatchable call: the
plugin leaves the cut call out, lists it in metadata["truncated_tool_calls"] with a
Notice (as openai-compat does), and core raises TruncatedToolCallError carrying that
Response. A closed call with broken JSON goes through the kit's repair."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from modelplug import Client, TruncatedToolCallError
from modelplug.contract.types import Event, Notice, TextDelta, ToolCallStart, ToolSpec
from modelplug_kit.testing import WireServer

MakeClient = Callable[..., Client]
Recording = Callable[[str], Path]
SPEC = "anthropic/claude-sonnet-4-6"
MAKE_FILE = ToolSpec(name="make_file")


def test_modelplug_stream_max_tokens_inside_tool_json_is_truncated_not_a_call(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("max_tokens_in_tool_json.sse"))
    events: list[Event] = []
    with pytest.raises(TruncatedToolCallError) as caught:
        events.extend(claude_client().stream(SPEC, "Write taxes.txt", tools=[MAKE_FILE]))
    error = caught.value
    assert not error.retryable and not error.error_class.fallback
    assert error.tool_name == "make_file" and error.arguments.endswith('"Filing taxes')
    response = error.partial
    assert response is not None
    assert response.stop_reason == "max_tokens"
    assert response.tool_calls == []
    assert response.text.startswith("I'll create a comprehensive tax guide")
    (cut,) = response.metadata["truncated_tool_calls"]
    assert cut["id"] == "toolu_01EKqbqmZrGRXy18eN7m9kvY"
    assert cut["name"] == "make_file"
    assert cut["arguments"].startswith('{"filename": "taxes.txt"')
    assert cut["arguments"].endswith('"Filing taxes')
    notices = [e for e in events if isinstance(e, Notice)]
    assert [n.kind for n in notices] == ["truncated_tool_call"]
    assert "make_file" in notices[0].message and "max_tokens" in notices[0].message
    # The start was shown, as it came; the text shown is the final text.
    assert [e.name for e in events if isinstance(e, ToolCallStart)] == ["make_file"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == response.text


def test_modelplug_stream_broken_json_in_a_closed_call_is_kept_raw(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("tool_use_invalid_json.sse"))
    response = claude_client().complete(SPEC, "Weather?", tools=[ToolSpec(name="get_weather")])
    assert response.stop_reason == "tool_use"
    (call,) = response.tool_calls
    assert call.id == "toolu_01NRLabsLyVHZPKxbKvkfSMn"
    # The repair never invents a value for a bare word: the raw string is kept.
    assert call.input == '{"location": "Paris", "unit": celsius}'
    assert "truncated_tool_calls" not in response.metadata


def test_modelplug_stream_tool_block_that_never_closed_is_not_a_call(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    # The max_tokens recording with its stop reason changed: the cut block still never
    # closed, so its call is still not returned.
    data = recording("max_tokens_in_tool_json.sse").read_text().split("\n", 1)[1]
    wire_server.add(data.replace('"stop_reason":"max_tokens"', '"stop_reason":"tool_use"'))
    events: list[Event] = []
    with pytest.raises(TruncatedToolCallError) as caught:
        events.extend(claude_client().stream(SPEC, "Write taxes.txt", tools=[MAKE_FILE]))
    assert "never closed" in str(caught.value)
    response = caught.value.partial
    assert response is not None
    assert response.tool_calls == []
    assert response.metadata["truncated_tool_calls"][0]["name"] == "make_file"
    (notice,) = [e for e in events if isinstance(e, Notice)]
    assert "never closed" in notice.message and "Raise max_tokens" not in notice.message
