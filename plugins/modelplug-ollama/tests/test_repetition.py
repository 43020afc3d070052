"""Repetition over Ollama's /api/chat: core's guard closes a looping stream at once (the
server sees the client hang up), and all three penalties go in ``options`` (Ollama's
frequency_penalty, presence_penalty and repeat_penalty).

The lines are framed as recorded/length.jsonl frames them (Ollama's docs/api.md chat
stream); the text is invented, shaped after a real loop (a paragraph repeated exactly
until the token cap: huggingface/candle issue #2068)."""

from __future__ import annotations

from modelplug.contract.types import Notice, Request

INTRO = "I checked the service logs.\n\n"
PARAGRAPH = (
    "The service restarts because the health check times out before the cache is warm. "
    "The cache is warm only after the first request, and the first request waits for "
    "the health check to pass.\n"
)
COPIES = 60
MODEL = "llama3.2"


def line(text: str) -> dict:
    return {
        "model": MODEL,
        "created_at": "2025-01-10T09:00:00.100Z",
        "message": {"role": "assistant", "content": text},
        "done": False,
    }


LAST = {
    "model": MODEL,
    "created_at": "2025-01-10T09:00:09.140Z",
    "message": {"role": "assistant", "content": ""},
    "done_reason": "length",
    "done": True,
    "prompt_eval_count": 26,
    "eval_count": 2600,
}


def test_a_looping_answer_is_cut_and_the_server_sees_the_connection_closed(ollama, wire) -> None:
    text = INTRO + PARAGRAPH * COPIES
    wire.lines([*(line(text[at : at + 12]) for at in range(0, len(text), 12)), LAST], delay=0.002)
    events = list(ollama().stream(f"ollama/{MODEL}", "why?"))
    response = events[-1].response
    assert response.stop_reason == "repetition"
    found = response.repetition
    assert found is not None and (found.channel, found.period) == ("content", len(PARAGRAPH))
    assert response.text == INTRO + PARAGRAPH[:-1]
    assert wire.server.wait_closed_by_client(wire.server.requests[-1].connection)


def test_every_penalty_goes_in_options(ollama, wire) -> None:
    wire.lines([line("ok"), LAST])
    request = Request(
        messages=[{"role": "user", "content": "hi"}],
        frequency_penalty=0.5,
        presence_penalty=0.25,
        repeat_penalty=1.1,
    )
    events = list(ollama().stream(f"ollama/{MODEL}", request))
    options = wire.server.requests[-1].json()["options"]
    assert options["frequency_penalty"] == 0.5
    assert options["presence_penalty"] == 0.25
    assert options["repeat_penalty"] == 1.1
    assert not [e for e in events if isinstance(e, Notice)]
