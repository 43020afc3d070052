"""``POST /v1/audio/transcriptions`` with the official openai SDK's
``audio.transcriptions.create`` against the gateway on uvicorn and granian, over an
OpenAI-compatible upstream on the loopback WireServer.

Upstream bytes, embedded so the tests run from this plugin's sdist alone: OpenAI's API
reference, "Create transcription", example answers (as in modelplug-openai-compat's
tests/recordings/openai_transcription*.json): the json one of gpt-4o-transcribe with
usage in tokens, and the verbose_json one of whisper-1 (segments cut to the first).
The audio is a real WAV made here (a 0.2 s 440 Hz tone, the stdlib ``wave`` module).
"""

from __future__ import annotations

import io
import math
import struct
import wave
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplug import Client
from modelplug_gateway.app import Gateway
from modelplug_gateway.auth import OpenGate
from modelplug_gateway.settings import GatewaySettings
from modelplug_gateway.shapes.base import ShapeError
from modelplug_gateway.transcriptions import parse_form
from modelplug_kit import multipart_form
from modelplug_kit.testing import WireServer

TOKENS_ANSWER = {
    "text": "Imagine the wildest idea that you've ever had, and you're curious about how it "
    "might scale to something that's a 100, a 1,000 times bigger. This is a place where "
    "you can get to do that.",
    "usage": {
        "type": "tokens",
        "input_tokens": 14,
        "input_token_details": {"text_tokens": 0, "audio_tokens": 14},
        "output_tokens": 45,
        "total_tokens": 59,
    },
}
VERBOSE_ANSWER = {
    "task": "transcribe",
    "language": "english",
    "duration": 8.470000267028809,
    "text": "The beach was a popular spot on a hot summer day. People were swimming in the "
    "ocean, building sandcastles, and playing beach volleyball.",
    "segments": [
        {
            "id": 0,
            "seek": 0,
            "start": 0.0,
            "end": 3.319999933242798,
            "text": " The beach was a popular spot on a hot summer day.",
            "tokens": [50364, 440, 7534, 390, 257, 3743, 4008, 322, 257, 2368, 4266, 786, 13],
            "temperature": 0.0,
            "avg_logprob": -0.2860786020755768,
            "compression_ratio": 1.2363636493682861,
            "no_speech_prob": 0.00985979475080967,
        }
    ],
    "usage": {"type": "duration", "seconds": 9},
}


def sine_wav(seconds: float = 0.2, rate: int = 8000) -> bytes:
    frames = b"".join(
        struct.pack("<h", int(12000 * math.sin(2 * math.pi * 440 * i / rate)))
        for i in range(int(seconds * rate))
    )
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(frames)
    return out.getvalue()


@pytest.fixture(params=["uvicorn", "granian"])
def server(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def wire() -> Iterator[WireServer]:
    upstream = WireServer().start()
    try:
        yield upstream
    finally:
        upstream.stop()


@pytest.fixture
def gateway_url(
    serve: Callable[..., AbstractContextManager[str]],
    make_client: Callable[..., Client],
    modelplug_config_dir: Path,
    wire: WireServer,
) -> Iterator[str]:
    (modelplug_config_dir / "config.toml").write_text(
        f'[providers.compat]\ntype = "openai-compatible"\nbase_url = "{wire.url}/v1"\n'
    )
    client = make_client("modelplug-openai-compat", entry_points=True)
    with serve(Gateway(client, GatewaySettings(), OpenGate())) as url:
        yield url


def sdk(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)


def test_the_openai_sdk_gets_the_text_and_usage(gateway_url: str, wire: WireServer) -> None:
    wire.add_json(TOKENS_ANSWER)
    audio = sine_wav()
    transcription = sdk(gateway_url).audio.transcriptions.create(
        model="compat/gpt-4o-transcribe", file=("clip.wav", audio), language="en"
    )
    assert transcription.text == TOKENS_ANSWER["text"]
    assert transcription.usage is not None and transcription.usage.type == "tokens"
    assert transcription.usage.input_tokens == 14 and transcription.usage.output_tokens == 45
    sent = wire.requests[-1]
    assert (sent.method, sent.path) == ("POST", "/v1/audio/transcriptions")
    form = parse_form(sent.headers["content-type"].encode(), sent.body)
    assert (form.filename, form.audio, form.model) == ("clip.wav", audio, "gpt-4o-transcribe")
    assert form.fields == {"language": "en"}


def test_verbose_json_and_text(gateway_url: str, wire: WireServer) -> None:
    wire.add_json(VERBOSE_ANSWER)
    verbose = sdk(gateway_url).audio.transcriptions.create(
        model="compat/whisper-1", file=("talk.mp3", sine_wav()), response_format="verbose_json"
    )
    assert verbose.text.startswith("The beach was")
    assert verbose.language == "english" and verbose.duration == pytest.approx(8.47)
    assert verbose.segments is not None and verbose.segments[0].id == 0
    wire.add_json(VERBOSE_ANSWER)
    text = sdk(gateway_url).audio.transcriptions.create(
        model="compat/whisper-1", file=("talk.mp3", sine_wav()), response_format="text"
    )
    assert text == VERBOSE_ANSWER["text"]


def test_errors_come_in_the_openai_shape(gateway_url: str, wire: WireServer) -> None:
    wire.add_json(
        {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}},
        status=401,
    )
    with pytest.raises(openai.AuthenticationError):
        sdk(gateway_url).audio.transcriptions.create(
            model="compat/whisper-1", file=("clip.wav", sine_wav())
        )
    with pytest.raises(openai.BadRequestError, match="extension"):
        sdk(gateway_url).audio.transcriptions.create(
            model="compat/whisper-1", file=("clip", sine_wav())
        )
    with pytest.raises(openai.BadRequestError, match="timestamp_granularities"):
        sdk(gateway_url).audio.transcriptions.create(
            model="compat/whisper-1",
            file=("clip.wav", sine_wav()),
            response_format="verbose_json",
            timestamp_granularities=["word"],
        )
    assert len(wire.requests) == 1


def test_a_json_body_is_refused_with_415(gateway_url: str) -> None:
    import httpx2

    answer = httpx2.post(gateway_url + "/v1/audio/transcriptions", json={"model": "x"})
    assert answer.status_code == 415
    assert "multipart/form-data" in answer.json()["error"]["message"]


@given(
    st.dictionaries(
        st.sampled_from(["file", "model", "language", "temperature", "response_format", "x"]),
        st.binary(max_size=20),
    ),
    st.sampled_from(["clip.wav", "", "noext", 'a"b.mp3']),
)
def test_any_form_is_read_or_refused_with_a_shape_error(
    parts: dict[str, bytes], filename: str
) -> None:
    fields = {k: v.decode("latin-1") for k, v in parts.items() if k != "file"}
    files = {"file": (filename, parts["file"], "audio/wav")} if "file" in parts else {}
    body, content_type = multipart_form(fields, files)
    try:
        parse_form(content_type.encode(), body)
    except ShapeError:
        pass


@given(st.binary(max_size=200))
def test_any_bytes_are_read_or_refused_with_a_shape_error(body: bytes) -> None:
    try:
        parse_form(b"multipart/form-data; boundary=xyz", b"--xyz\r\n" + body)
    except ShapeError:
        pass
