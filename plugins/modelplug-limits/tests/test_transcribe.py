"""The policy around transcription calls, on the loopback server answering with OpenAI's
transcription example (modelplug-openai-compat's recording): one request counted per
call in the rpm window (a wait when it is used, on the injected clock), a budget
reserved before the call and settled with the priced transcript's usage after."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from modelplug import Client, ModelError
from modelplug_kit import from_nano
from modelplug_kit.testing import WireServer, load_recording

pytest.importorskip("modelplug_openai_compat", reason="the wire server speaks OpenAI's API")

RECORDING = (
    Path(__file__).parents[2] / "modelplug-openai-compat/tests/recordings/openai_transcription.json"
)
MODEL = "wire/gpt-4o-transcribe"
# 2.50 USD per million input tokens and 10 per million output tokens: the recording's
# 14 audio tokens in and 45 out cost 0.000035 + 0.00045 = 0.000485 USD.
PRICE = {"input": "2.50", "output": "10"}
AUDIO = b"RIFF....WAVEfmt "  # never decoded: the loopback server answers any audio


@pytest.fixture
def wire() -> Iterator[WireServer]:
    server = WireServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def transcriber(wire: WireServer, make_client: Any, limits: Any) -> Any:
    """``transcriber(answers, **limits_options)``: a Client on the loopback server that
    answers ``answers`` transcriptions, with a limits policy on the injected clock."""

    def make(answers: int, **options: Any) -> Client:
        for _ in range(answers):
            wire.add(load_recording(RECORDING), content_type="application/json")
        provider = {
            "type": "openai-compatible",
            "base_url": wire.url + "/v1",
            "server": "openai",
            "api_key_env": "WIRE_KEY",
        }
        config = {"providers": {"wire": provider}, "models": {MODEL: {"price": PRICE}}}
        return make_client(  # type: ignore[no-any-return]
            limits(**options),
            "modelplug-openai-compat",
            entry_points=True,
            config=config,
            environ={"WIRE_KEY": "sk-limits-transcribe-0123456789"},
        )

    return make


def budget_value(counters: Any, measure: str) -> int:
    (key,) = [k for k in counters.live_keys() if k.startswith("budget:") and measure in k]
    value, _ = counters.read_now([key])[0]
    return int(value)


def test_modelplug_transcribe_waits_for_the_next_window_when_the_rpm_is_used(
    transcriber: Any, wire: WireServer, clock: Any
) -> None:
    client = transcriber(2, **{MODEL: {"rpm": 1}, "max_wait": 120})

    first = client.transcribe(MODEL, AUDIO, filename="clip.wav")
    assert clock.sleeps == []  # the first call fits the window
    second = client.transcribe(MODEL, AUDIO, filename="clip.wav")

    assert first.text == second.text and len(wire.requests) == 2
    assert len(clock.sleeps) == 1 and 0 < clock.sleeps[0] <= 60  # to the next minute


def test_modelplug_transcribe_refuses_when_the_wait_is_past_max_wait(
    transcriber: Any, wire: WireServer
) -> None:
    client = transcriber(1, **{MODEL: {"rpm": 1}, "max_wait": 1})
    client.transcribe(MODEL, AUDIO, filename="clip.wav")

    with pytest.raises(ModelError, match="longer than max_wait") as caught:
        client.transcribe(MODEL, AUDIO, filename="clip.wav")

    assert len(wire.requests) == 1  # the refused call was never sent
    assert caught.value.error_class.kind == "rate_limit"


def test_modelplug_transcribe_settles_the_budget_with_the_priced_transcript(
    transcriber: Any, counters: Any
) -> None:
    client = transcriber(2, budgets={"daily": {"period": "day", "spend": "1", "tokens": 10**6}})

    transcript = client.transcribe(MODEL, AUDIO, filename="clip.wav")
    client.transcribe(MODEL, AUDIO, filename="clip.wav")

    assert transcript.cost is not None and transcript.cost.amount == Decimal("0.000485")
    # The reported usage replaced each reservation (the ceiling of 4096 output tokens).
    assert budget_value(counters, "tokens") == 2 * 59
    assert from_nano(budget_value(counters, "spend")) == Decimal("0.000970")
