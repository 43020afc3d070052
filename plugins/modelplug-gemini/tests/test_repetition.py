"""Repetition over the Gemini API: core's guard closes a looping stream at once (the
server sees the client hang up); frequency_penalty and presence_penalty go in
generationConfig, and repeat_penalty, which Gemini has no field for, is said in a
Notice rather than sent.

The events are framed as recorded/text.sse and max_tokens.sse frame them (alt=sse, one
candidate); the text is invented, shaped after a real loop (a paragraph repeated
exactly until the token cap: huggingface/candle issue #2068)."""

from __future__ import annotations

import json
from collections.abc import Callable

from modelplug import Client
from modelplug.contract.types import Notice, Request
from modelplug_kit.testing import WireServer

SPEC = "gemini/gemini-2.5-flash"
INTRO = "I checked the service logs.\n\n"
PARAGRAPH = (
    "The service restarts because the health check times out before the cache is warm. "
    "The cache is warm only after the first request, and the first request waits for "
    "the health check to pass.\n"
)
COPIES = 60


def event(text: str, finish: str | None = None) -> str:
    candidate: dict = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
    data: dict = {"candidates": [candidate], "modelVersion": "gemini-2.5-flash"}
    if finish:
        candidate["finishReason"] = finish
        data["usageMetadata"] = {"promptTokenCount": 8, "candidatesTokenCount": 2600}
    return f"data: {json.dumps(data)}\r\n\r\n"


def looping_stream() -> list[str]:
    text = INTRO + PARAGRAPH * COPIES
    frames = [event(text[at : at + 12]) for at in range(0, len(text), 12)]
    return [*frames, event("", "MAX_TOKENS")]


def test_a_looping_answer_is_cut_and_the_server_sees_the_connection_closed(
    gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    wire_server.add(looping_stream(), delay=0.002)
    events = list(gemini_client().stream(SPEC, "why?"))
    response = events[-1].response
    assert response.stop_reason == "repetition"
    found = response.repetition
    assert found is not None and (found.channel, found.period) == ("content", len(PARAGRAPH))
    assert response.text == INTRO + PARAGRAPH[:-1]
    assert wire_server.wait_closed_by_client(wire_server.requests[-1].connection)


def test_the_openai_pair_is_sent_and_repeat_penalty_said(
    gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    wire_server.add([event("ok", "STOP")])
    request = Request(
        messages=[{"role": "user", "content": "hi"}],
        frequency_penalty=0.5,
        presence_penalty=0.25,
        repeat_penalty=1.1,
    )
    events = list(gemini_client().stream(SPEC, request))
    config = wire_server.requests[-1].json()["generationConfig"]
    assert config == {"frequencyPenalty": 0.5, "presencePenalty": 0.25}
    notices = [e for e in events if isinstance(e, Notice)]
    assert [n.details["fields"] for n in notices] == [["repeat_penalty"]]
