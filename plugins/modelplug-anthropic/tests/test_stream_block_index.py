"""Blocks are read by their index: a stream whose first block is index 1, or that skips
an index, is a whole answer (its content the blocks in index order), not an error. A
block that starts below an earlier one still is (test_stream_malformed.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from modelplug import Client
from modelplug.contract.types import Done, TextBlock, TextDelta, ToolCallStart, ToolUseBlock
from modelplug_kit.testing import WireServer

MakeClient = Callable[..., Client]
Recording = Callable[[str], Path]
SPEC = "anthropic/claude-sonnet-4-6"


def test_modelplug_stream_first_block_at_index_1_is_read(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("first_block_index_1.sse"))
    events = list(claude_client().stream(SPEC, "Say hello"))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", ", world!"]
    assert isinstance(events[-1], Done)
    response = events[-1].response
    assert response.text == "Hello, world!"
    assert response.message.content == [TextBlock(text="Hello, world!")]
    assert response.stop_reason == "end_turn"
    assert response.metadata["id"] == "msg_01TextExample"
    usage = response.usage
    assert (usage.input, usage.cache_write, usage.cache_read, usage.output) == (25, 10, 100, 15)
    assert usage.reported


def test_modelplug_stream_a_skipped_block_index_is_read(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("block_index_gap.sse"))
    events = list(claude_client().stream(SPEC, "Weather in San Francisco?"))
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.id, s.name, s.index) for s in starts] == [
        ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", 2)
    ]
    assert isinstance(events[-1], Done)
    response = events[-1].response
    assert response.text == "Let me check the weather."
    content = response.message.content
    assert [type(b) for b in content] == [TextBlock, ToolUseBlock]
    call = content[1]
    assert isinstance(call, ToolUseBlock)
    assert call.id == "toolu_01T1x1fJ34qAmk2tNTrN7Up6"
    assert call.input == {"location": "San Francisco, CA", "unit": "fahrenheit"}
    assert response.stop_reason == "tool_use"
    assert (response.usage.input, response.usage.output) == (472, 89)
