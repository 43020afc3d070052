"""modelplug_transcribe over POST {base}/audio/transcriptions on the loopback server:
the multipart form sent (compared with the one the openai SDK's
``audio.transcriptions.create`` sends), the answers read (json with usage in tokens,
verbose_json with language and duration), errors classified; a property test of the
answer reader.

The audio is a real WAV made here: a 0.2 s 440 Hz sine tone written with the stdlib
``wave`` module. The answers are OpenAI's API reference examples (see the recordings'
first lines)."""

from __future__ import annotations

import email.parser
import email.policy
import io
import math
import struct
import wave
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplug import ModelError, RequestError
from modelplug.contract.types import Endpoint, Route
from modelplug_kit import read_openai_transcript
from modelplug_kit.testing import load_recording
from modelplug_openai_compat.errors import ERRORS

RECORDINGS = Path(__file__).parent / "recordings"
KEY = {"WIRE_KEY": "sk-transcribe-secret-0123456789"}


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


def form_parts(content_type: str, body: bytes) -> dict[str, tuple[str | None, str, bytes]]:
    """The parts of a multipart/form-data body: name -> (filename, content type, data)."""
    head = f"Content-Type: {content_type}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    parts = {}
    for part in message.iter_parts():  # type: ignore[attr-defined]
        name = part.get_param("name", header="content-disposition")
        data = part.get_payload(decode=True)
        parts[name] = (part.get_filename(), part.get_content_type(), data)
    return parts


def serve(wire: Any, name: str, *, status: int = 200) -> None:
    wire.add(load_recording(RECORDINGS / name), status=status, content_type="application/json")


def test_modelplug_transcribe(compat: Any, wire_server: Any) -> None:
    serve(wire_server, "openai_transcription.json")
    client = compat(server="openai", api_key_env="WIRE_KEY", environ=KEY)
    audio = sine_wav()
    transcript = client.transcribe(
        "wire/gpt-4o-transcribe", audio, filename="clip.wav", language="en", prompt="ideas"
    )
    assert transcript.text.startswith("Imagine the wildest idea")
    assert transcript.usage.input == 14 and transcript.usage.output == 45
    assert transcript.usage.reported
    assert transcript.model == "wire/gpt-4o-transcribe"
    assert transcript.metadata["usage"]["input_token_details"]["audio_tokens"] == 14
    sent = wire_server.requests[-1]
    assert (sent.method, sent.path) == ("POST", "/v1/audio/transcriptions")
    assert sent.headers["authorization"] == f"Bearer {KEY['WIRE_KEY']}"
    parts = form_parts(sent.headers["content-type"], sent.body)
    assert parts["file"] == ("clip.wav", "audio/wav", audio)
    assert parts["model"][2] == b"gpt-4o-transcribe"
    assert parts["response_format"][2] == b"json"  # all gpt-4o-transcribe takes
    assert parts["language"][2] == b"en" and parts["prompt"][2] == b"ideas"


def test_verbose_json_gives_language_and_duration(compat: Any, wire_server: Any) -> None:
    serve(wire_server, "openai_transcription_verbose.json")
    client = compat(server="openai", api_key_env="WIRE_KEY", environ=KEY)
    transcript = client.transcribe("wire/whisper-1", sine_wav(), filename="talk.mp3")
    assert transcript.text.startswith("The beach was a popular spot")
    assert transcript.language == "english"
    assert transcript.duration_s == pytest.approx(8.47)
    assert not transcript.usage.reported and transcript.cost is None
    parts = form_parts(
        wire_server.requests[-1].headers["content-type"], wire_server.requests[-1].body
    )
    assert parts["file"][:2] == ("talk.mp3", "audio/mpeg")
    assert parts["response_format"][2] == b"verbose_json"


def test_the_form_has_the_parts_the_openai_sdk_sends(compat: Any, wire_server: Any) -> None:
    import openai

    audio = sine_wav()
    serve(wire_server, "openai_transcription.json")
    compat(server="openai", api_key_env="WIRE_KEY", environ=KEY).transcribe(
        "wire/gpt-4o-transcribe", audio, filename="clip.wav", temperature=0.2
    )
    ours = wire_server.requests[-1]
    serve(wire_server, "openai_transcription.json")
    sdk = openai.OpenAI(api_key="sk-x", base_url=wire_server.url + "/v1", max_retries=0)
    sdk.audio.transcriptions.create(
        model="gpt-4o-transcribe",
        file=("clip.wav", audio),
        response_format="json",
        temperature=0.2,
    )
    theirs = wire_server.requests[-1]
    assert ours.path == theirs.path
    mine = form_parts(ours.headers["content-type"], ours.body)
    sdks = form_parts(theirs.headers["content-type"], theirs.body)
    assert set(mine) == set(sdks)
    for name in mine:
        assert mine[name][2] == sdks[name][2], name
    assert mine["file"][0] == sdks["file"][0] == "clip.wav"


def test_a_refused_key_is_a_classified_error(compat: Any, wire_server: Any) -> None:
    wire_server.add_json(
        {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}},
        status=401,
    )
    client = compat(server="openai", api_key_env="WIRE_KEY", environ=KEY)
    with pytest.raises(ModelError) as raised:
        client.transcribe("wire/whisper-1", sine_wav(), filename="clip.wav")
    assert raised.value.error_class.kind == "auth"
    assert KEY["WIRE_KEY"] not in str(raised.value)


def test_a_request_without_an_extension_is_refused_before_sending(
    compat: Any, wire_server: Any
) -> None:
    client = compat(server="openai", api_key_env="WIRE_KEY", environ=KEY)
    with pytest.raises(RequestError, match="extension"):
        client.transcribe("wire/whisper-1", sine_wav(), filename="clip")
    with pytest.raises(RequestError, match="empty"):
        client.transcribe("wire/whisper-1", b"", filename="clip.wav")
    assert wire_server.requests == []


ROUTE = Route(
    provider="wire",
    model="whisper-1",
    endpoint=Endpoint(type="openai-compatible", base_url="http://127.0.0.1:9/v1"),
)


@given(st.binary(max_size=300) | st.text(max_size=200).map(str.encode))
def test_any_answer_is_a_transcript_or_a_classified_error(raw: bytes) -> None:
    try:
        transcript = read_openai_transcript(ROUTE, raw, ERRORS)
    except ModelError:
        return
    assert isinstance(transcript.text, str)


@given(
    st.dictionaries(
        st.sampled_from(["text", "usage", "duration", "language", "segments"]),
        st.none()
        | st.integers(-5, 10**6)
        | st.floats(allow_nan=True)
        | st.text(max_size=10)
        | st.dictionaries(
            st.sampled_from(["type", "input_tokens", "output_tokens", "seconds"]),
            st.none() | st.integers(-5, 100) | st.text(max_size=8) | st.floats(),
        ),
    )
)
def test_mutated_answers_never_raise_a_stray_exception(data: dict[str, Any]) -> None:
    import json

    try:
        read_openai_transcript(ROUTE, json.dumps(data).encode(), ERRORS)
    except ModelError:
        pass
