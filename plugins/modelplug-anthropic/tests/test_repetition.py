"""Repetition over the Messages API: core's guard closes a looping stream at once (the
server sees the client hang up), and the penalties, which the Messages API has none
of, are said in a Notice rather than sent.

The events are framed as recordings/text.sse (Anthropic's streaming docs) frames them;
the text is invented, shaped after a real loop (a paragraph repeated exactly until the
token cap: huggingface/candle issue #2068)."""

from __future__ import annotations

import json
from collections.abc import Callable

from modelplug import Client
from modelplug.contract.types import Notice, Request
from modelplug_kit.testing import WireServer

MakeClient = Callable[..., Client]
SPEC = "anthropic/claude-sonnet-4-6"
INTRO = "I checked the service logs.\n\n"
PARAGRAPH = (
    "The service restarts because the health check times out before the cache is warm. "
    "The cache is warm only after the first request, and the first request waits for "
    "the health check to pass.\n"
)
COPIES = 60


def event(name: str, data: dict) -> str:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def looping_stream() -> list[str]:
    text = INTRO + PARAGRAPH * COPIES
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_01TextExample",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 25, "output_tokens": 1},
        },
    }
    block = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": ""},
    }
    deltas = [
        event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": text[at : at + 12]},
            },
        )
        for at in range(0, len(text), 12)
    ]
    end = [
        event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "max_tokens", "stop_sequence": None},
                "usage": {"output_tokens": 2600},
            },
        ),
        event("message_stop", {"type": "message_stop"}),
    ]
    return [event("message_start", start), event("content_block_start", block), *deltas, *end]


def test_a_looping_answer_is_cut_and_the_server_sees_the_connection_closed(
    claude_client: MakeClient, wire_server: WireServer
) -> None:
    wire_server.add(looping_stream(), delay=0.002)
    events = list(claude_client().stream(SPEC, "why?"))
    response = events[-1].response
    assert response.stop_reason == "repetition"
    found = response.repetition
    assert found is not None and (found.channel, found.period) == ("content", len(PARAGRAPH))
    assert response.text == INTRO + PARAGRAPH[:-1]
    assert wire_server.wait_closed_by_client(wire_server.requests[-1].connection)


def test_penalties_are_said_not_sent(claude_client: MakeClient, wire_server: WireServer) -> None:
    wire_server.add(looping_stream()[:3] + looping_stream()[-3:])
    request = Request(
        messages=[{"role": "user", "content": "hi"}], frequency_penalty=0.5, repeat_penalty=1.1
    )
    events = list(claude_client().stream(SPEC, request))
    body = wire_server.requests[-1].json()
    assert not {"frequency_penalty", "presence_penalty", "repeat_penalty"} & set(body)
    notices = [e for e in events if isinstance(e, Notice)]
    assert [n.kind for n in notices] == ["sampling_unsupported"]
    assert notices[0].details["fields"] == ["frequency_penalty", "repeat_penalty"]
    assert "the Messages API has no penalties" in notices[0].message
