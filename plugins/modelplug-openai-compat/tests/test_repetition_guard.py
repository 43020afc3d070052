"""Core's repetition guard over this plugin's wire: a llama.cpp stream that loops is
closed at once (the server sees the client hang up long before the stream's end), and
the call ends with stop reason ``repetition``, the record and one copy of the loop.

The frames are llama-server's, as recordings/llamacpp_reasoning_tools.sse has them
(same fields, ids and fingerprint); the text is invented, shaped after a real loop (a
paragraph repeated exactly until the token cap: huggingface/candle issue #2068)."""

from __future__ import annotations

import json

from modelplug.contract.types import Notice, Request

INTRO = "I checked the service logs.\n\n"
PARAGRAPH = (
    "The service restarts because the health check times out before the cache is warm. "
    "The cache is warm only after the first request, and the first request waits for "
    "the health check to pass.\n"
)
COPIES = 60
FRAME = {
    "choices": [{"finish_reason": None, "index": 0, "delta": {}}],
    "created": 1764460802,
    "id": "chatcmpl-Lc7",
    "model": "qwen3-8b",
    "system_fingerprint": "b6310-2a0dc97e",
    "object": "chat.completion.chunk",
}


def frame(channel: str, text: str) -> str:
    event = json.loads(json.dumps(FRAME))
    event["choices"][0]["delta"] = {channel: text}
    return "data: " + json.dumps(event, separators=(",", ":")) + "\n\n"


def looping_stream(channel: str) -> list[str]:
    """The whole answer a stuck model would send: 60 copies, in 12-character deltas,
    then the finish chunk and [DONE]."""
    text = INTRO + PARAGRAPH * COPIES
    frames = [frame(channel, text[at : at + 12]) for at in range(0, len(text), 12)]
    end = json.loads(json.dumps(FRAME))
    end["choices"][0]["finish_reason"] = "length"
    return [*frames, "data: " + json.dumps(end) + "\n\n", "data: [DONE]\n\n"]


def run(compat, wire_server, channel: str, **fields):
    # A few milliseconds between frames, as a model writes: the server notices the
    # client hanging up between two of them.
    wire_server.add(looping_stream(channel), delay=0.002)
    events = list(compat(server="llamacpp").stream("wire/qwen3-8b", Request(**fields)))
    request = wire_server.requests[-1]
    return events, request


def test_a_looping_answer_is_cut_and_the_server_sees_the_connection_closed(compat, wire_server):
    events, request = run(
        compat, wire_server, "content", messages=[{"role": "user", "content": "why?"}]
    )
    response = events[-1].response
    assert response.stop_reason == "repetition"
    found = response.repetition
    assert found is not None and found.channel == "content"
    assert (found.period, found.offset) == (len(PARAGRAPH), len(INTRO) - 1)
    assert 3 <= found.copies < COPIES
    # One copy kept (the run begins at the intro's last newline), nothing before lost.
    assert response.text == INTRO + PARAGRAPH[:-1]
    assert [e.kind for e in events if isinstance(e, Notice)] == ["repetition"]
    assert wire_server.wait_closed_by_client(request.connection)


def test_a_loop_in_the_reasoning_is_cut_too(compat, wire_server):
    events, request = run(
        compat, wire_server, "reasoning_content", messages=[{"role": "user", "content": "why?"}]
    )
    response = events[-1].response
    assert response.stop_reason == "repetition"
    assert response.repetition is not None and response.repetition.channel == "reasoning"
    assert response.message.content[0].text == INTRO + PARAGRAPH[:-1]
    assert wire_server.wait_closed_by_client(request.connection)


def test_with_the_guard_off_the_loop_runs_to_its_end(compat, wire_server):
    events, _ = run(
        compat,
        wire_server,
        "content",
        messages=[{"role": "user", "content": "why?"}],
        repetition=False,
    )
    response = events[-1].response
    assert response.stop_reason == "max_tokens"
    assert response.text == INTRO + PARAGRAPH * COPIES
