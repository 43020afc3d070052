"""modelplug_transcribe on Gemini: the audio as inline_data beside the instruction, sent
to generateContent with the key in its header; the answer's text and usage read; an
answer without a text a classified error; a property test of the reader.

The answer: tests/recorded/transcribe_audio.json (the generateContent response shape of
Google's reference; its text and counts invented, as its first line says). The audio is
a real WAV made here (0.1 s of silence, the stdlib ``wave`` module)."""

from __future__ import annotations

import base64
import io
import wave
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplug import ModelError, RequestError
from modelplug.contract.types import Endpoint, Route
from modelplug_gemini.transcribe import INSTRUCTION, read_transcript


def silence() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(8000)
        wav.writeframes(b"\0\0" * 800)
    return out.getvalue()


def test_modelplug_transcribe(
    gemini_client: Any, wire_server: Any, recorded: Any, test_key: str
) -> None:
    wire_server.add_file(recorded("transcribe_audio.json"), content_type="application/json")
    audio = silence()
    transcript = gemini_client().transcribe(
        "gemini/gemini-2.5-flash", audio, filename="clip.wav", language="en", temperature=0
    )
    assert transcript.text == "Hello, this is a short test of the transcription."
    assert (transcript.usage.input, transcript.usage.output) == (32, 11)
    assert transcript.model == "gemini/gemini-2.5-flash"
    sent = wire_server.requests[-1]
    assert sent.path.endswith("/models/gemini-2.5-flash:generateContent")
    assert sent.headers["x-goog-api-key"] == test_key
    body = sent.json()
    text, data = body["contents"][0]["parts"]
    assert text["text"].startswith(INSTRUCTION) and "'en'" in text["text"]
    assert data["inline_data"]["mime_type"] == "audio/wav"
    assert base64.b64decode(data["inline_data"]["data"]) == audio
    assert body["generationConfig"] == {"temperature": 0.0}


def test_an_extension_gemini_cannot_read_is_refused_before_sending(
    gemini_client: Any, wire_server: Any
) -> None:
    with pytest.raises(RequestError, match="audio type"):
        gemini_client().transcribe("gemini/gemini-2.5-flash", b"x", filename="notes.txt")
    assert wire_server.requests == []


ROUTE = Route(provider="gemini", model="m", endpoint=Endpoint(type="gemini"))


def test_an_answer_without_text_is_a_classified_error() -> None:
    with pytest.raises(ModelError, match="SAFETY"):
        read_transcript(ROUTE, {"candidates": [{"finishReason": "SAFETY"}]})


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-3, 50) | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "candidates",
                        "content",
                        "parts",
                        "text",
                        "thought",
                        "usageMetadata",
                        "promptTokenCount",
                        "candidatesTokenCount",
                        "finishReason",
                    ]
                ),
                inner,
                max_size=4,
            )
        ),
        max_leaves=12,
    )
)
def test_any_answer_is_a_transcript_or_a_classified_error(answer: Any) -> None:
    if not isinstance(answer, dict):
        answer = {"candidates": answer}
    try:
        read_transcript(ROUTE, answer)
    except ModelError:
        pass
