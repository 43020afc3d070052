"""Usage: message_start's counts, overwritten by message_delta's cumulative ones; read
from message_delta alone when message_start has none; estimated when neither has any.
Through core's usage_from_anthropic."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from modelplug import Client
from modelplug.contract.types import Usage
from modelplug_kit import usage_from_anthropic
from modelplug_kit.testing import WireServer, load_recording

MakeClient = Callable[..., Client]
Recording = Callable[[str], Path]
SPEC = "anthropic/claude-sonnet-4-6"


def test_modelplug_stream_message_start_without_usage_reads_message_delta(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("usage_only_in_message_delta.sse"))
    response = claude_client().complete(SPEC, "hi")
    assert response.text == "hi"
    usage = response.usage
    assert usage.reported
    assert (usage.input, usage.output, usage.cache_write, usage.cache_read) == (11, 1, 3, 5)
    assert usage.web_searches == 2


def test_modelplug_stream_without_any_usage_is_estimated(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    events = []
    for raw in load_recording(recording("usage_only_in_message_delta.sse")).split(b"\n\n"):
        data = [line[6:] for line in raw.split(b"\n") if line.startswith(b"data: ")]
        if data:
            event = json.loads(data[0])
            event.pop("usage", None)
            events.append(event)
    wire_server.add_sse(events)
    usage = claude_client().complete(SPEC, "hi").usage
    assert usage.reported is False
    assert usage.input > 0 and usage.output == 1


def test_usage_from_anthropic_reads_the_messages_api_shape() -> None:
    usage = usage_from_anthropic(
        {
            "input_tokens": 25,
            "output_tokens": 60,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 10,
            "output_tokens_details": {"thinking_tokens": 45},
            "server_tool_use": {"web_search_requests": 1},
        }
    )
    assert usage == Usage(
        input=25, output=60, cache_read=100, cache_write=10, reasoning=45, web_searches=1
    )
    # message_delta leaves out what it does not change: nulls are zeros.
    assert usage_from_anthropic({"output_tokens": 3, "input_tokens": None}) == Usage(output=3)
    assert usage_from_anthropic({}) is None
    assert usage_from_anthropic({"service_tier": "standard"}) is None
    assert usage_from_anthropic({"input_tokens": -1, "output_tokens": 2}) is None
    assert usage_from_anthropic("12") is None
