"""message_stop while a block is still open ends the message there, as the anthropic
SDK's accumulator reads it: every block seen is in the Response, its text and thinking
kept; a tool call whose JSON is whole is a call, one whose JSON is not is listed as
truncated (never a call the caller would run). No error, nothing lost."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplug import Client
from modelplug.contract.types import (
    Done,
    Notice,
    Response,
    Route,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ToolUseBlock,
)
from modelplug.testing import examples
from modelplug_anthropic.reader import MessageReader
from modelplug_kit.testing import WireServer

MakeClient = Callable[..., Client]
Recording = Callable[[str], Path]
SPEC = "anthropic/claude-sonnet-4-6"


def test_the_sdk_s_out_of_order_fixture_is_read_as_the_sdk_reads_it(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    # Block 1 starts with no block 0, and message_stop comes while it is still open.
    wire_server.add_file(recording("out_of_order.sse"))
    events = list(claude_client().stream(SPEC, "hi"))
    assert isinstance(events[-1], Done)
    response = events[-1].response
    sdk = sdk_final_message(recorded_body(recording("out_of_order.sse")))
    assert [b.type for b in sdk.content] == ["text"]
    assert response.message.content == [TextBlock(text="")]
    assert response.metadata["id"] == sdk.id == "msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK"
    assert sdk.stop_reason is None and response.stop_reason == "other"
    assert (response.usage.input, response.usage.output) == (11, 1)


def test_blocks_open_at_message_stop_keep_their_text_and_their_call(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("blocks_open_at_message_stop.sse"))
    events = list(claude_client().stream(SPEC, "Weather in San Francisco?"))
    response = events[-1].response
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == response.text
    assert response.text == "Let me check the weather."
    (call,) = response.tool_calls
    assert call.input == {"location": "San Francisco, CA", "unit": "fahrenheit"}
    assert not [e for e in events if isinstance(e, Notice)]


# --------------------------------------------------------------------- the property


def recorded_body(path: Path) -> bytes:
    return path.read_bytes().split(b"\n", 1)[1]


class SDKReader:
    """The SDK's own reading of an SSE body (its public stream helper and accumulator),
    over httpx2's MockTransport; one SDK client for every body."""

    def __init__(self) -> None:
        self.body = b""
        http = httpx2.Client(transport=httpx2.MockTransport(self.handle))
        self.sdk = anthropic.Anthropic(
            api_key="sk-ant-test", base_url="http://sdk.test", http_client=http, max_retries=0
        )

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, content=self.body, headers={"content-type": "text/event-stream"}
        )

    def final_message(self, body: bytes) -> Any:
        self.body = body
        messages: Any = [{"role": "user", "content": "q"}]
        with self.sdk.messages.stream(model="m", max_tokens=10, messages=messages) as stream:
            return stream.get_final_message()


_SDK: list[SDKReader] = []


def sdk_final_message(body: bytes) -> Any:
    if not _SDK:
        _SDK.append(SDKReader())
    return _SDK[0].final_message(body)


WORDS = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
INPUTS = st.dictionaries(
    st.sampled_from(["city", "unit", "days"]),
    st.one_of(WORDS, st.integers(-5, 50), st.booleans()),
    max_size=3,
)


@st.composite
def stream_with_open_blocks(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """A Messages API stream whose blocks (0..n-1) may each lose their
    content_block_stop, ended by message_stop; and each tool call's JSON as sent, by id."""
    message = {
        "id": "msg_p",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    sent_json: dict[str, str] = {}
    for index in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["text", "thinking", "tool_use"]))
        pieces: list[dict[str, Any]] = []
        if kind == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            pieces = [{"type": "text_delta", "text": t} for t in draw(st.lists(WORDS, max_size=3))]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            thoughts = draw(st.lists(WORDS, max_size=3))
            pieces = [{"type": "thinking_delta", "thinking": t} for t in thoughts]
        else:
            start = {"type": "tool_use", "id": f"toolu_{index}", "name": "f", "input": {}}
            whole = json.dumps(draw(INPUTS))
            # The JSON as sent: whole, or cut (the block open at message_stop).
            sent = whole[: draw(st.integers(0, len(whole)))]
            sent_json[start["id"]] = sent
            cuts = sorted(draw(st.lists(st.integers(0, len(sent)), max_size=3)))
            bounds = [0, *cuts, len(sent)]
            pieces = [
                {"type": "input_json_delta", "partial_json": sent[a:b]}
                for a, b in itertools.pairwise(bounds)
            ]
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events += [{"type": "content_block_delta", "index": index, "delta": p} for p in pieces]
        closed = kind != "tool_use" or sent_json[start["id"]] == whole
        if closed and draw(st.booleans()):
            events.append({"type": "content_block_stop", "index": index})
    if draw(st.booleans()):
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 7},
            }
        )
    events.append({"type": "message_stop"})
    return events, sent_json


def ours(events: list[dict[str, Any]]) -> Response:
    reader = MessageReader(Route(provider="anthropic", model="m"), hide_thinking=False)
    for event in events:
        reader.feed(event)
    assert reader.complete
    response, _ = reader.finish()
    return response


def sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


@settings(max_examples=examples(60), deadline=None)
@given(stream_with_open_blocks())
def test_open_blocks_at_message_stop_lose_nothing_the_sdk_keeps(
    drawn: tuple[list[dict[str, Any]], dict[str, str]],
) -> None:
    events, sent_json = drawn
    response = ours(events)  # never a Problem: message_stop ends the message
    sdk = sdk_final_message(sse(events))
    truncated = {t["id"]: t["arguments"] for t in response.metadata.get("truncated_tool_calls", [])}
    kept = iter(response.message.content)
    for block in sdk.content:
        if block.type == "tool_use" and block.id in truncated:
            # Cut JSON: listed with the arguments as sent, not returned as a call.
            assert truncated.pop(block.id) == sent_json[block.id]
            continue
        if block.type == "text" and not block.text:
            mine = next(kept)
            assert isinstance(mine, TextBlock) and mine.text == ""
            continue
        mine = next(kept)
        if block.type == "text":
            assert isinstance(mine, TextBlock) and mine.text == block.text
        elif block.type == "thinking":
            assert isinstance(mine, ThinkingBlock) and mine.text == block.thinking
        else:
            assert isinstance(mine, ToolUseBlock) and mine.input == block.input
    assert next(kept, None) is None
    assert truncated == {}
