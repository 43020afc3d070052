"""Speech to text: one transcription call's request and its answer.

The audio travels as the bytes of a file with its name: the name's extension is how
OpenAI's ``/v1/audio/transcriptions`` (and the servers that copy it) tell the container
(``clip.wav``, ``talk.mp3``, ``memo.m4a``), and how Gemini is told the audio's MIME type.
"""

from __future__ import annotations

import mimetypes
from typing import Any

from pydantic import Field

from modelplug.contract.routes import Route
from modelplug.contract.types import Cost, Usage, _Model

__all__ = ["AUDIO_TYPES", "TranscribeRequest", "Transcript", "audio_mime_type"]

# The containers the transcription APIs name (OpenAI's list: flac, mp3, mp4, mpeg,
# mpga, m4a, ogg, wav, webm; Gemini's adds aac and aiff), by extension.
AUDIO_TYPES: dict[str, str] = {
    "aac": "audio/aac",
    "aiff": "audio/aiff",
    "flac": "audio/flac",
    "m4a": "audio/mp4",
    "mp3": "audio/mpeg",
    "mp4": "audio/mp4",
    "mpeg": "audio/mpeg",
    "mpga": "audio/mpeg",
    "oga": "audio/ogg",
    "ogg": "audio/ogg",
    "opus": "audio/ogg",
    "wav": "audio/wav",
    "webm": "audio/webm",
}


def audio_mime_type(filename: str) -> str | None:
    """The audio MIME type a file name's extension says (None: not an audio name)."""
    _, dot, extension = filename.rpartition(".")
    if dot:
        known = AUDIO_TYPES.get(extension.lower())
        if known is not None:
            return known
    guessed, _ = mimetypes.guess_type(filename)
    return guessed if guessed is not None and guessed.startswith("audio/") else None


class TranscribeRequest(_Model):
    """One transcription call: the audio file's bytes and name, and what the caller
    asks of the text (its language as an ISO-639-1 code, a prompt of words to expect,
    a sampling temperature), and provider fields modelplug has no neutral name for."""

    audio: bytes = Field(min_length=1, repr=False)
    filename: str = Field(min_length=1)
    language: str | None = None
    prompt: str | None = None
    temperature: float | None = Field(default=None, ge=0, le=1)
    extra: dict[str, Any] = Field(default_factory=dict)


class Transcript(_Model):
    """The text of one transcription call.

    ``model`` is the ``provider/model`` that answered (after any fallback); ``language``
    and ``duration_s`` (the audio's length in seconds) are None when the server did not
    say; ``usage`` holds the tokens the server reported (``reported`` False when it
    reported none: a server that bills by the second, such as ``whisper-1``, states
    ``duration_s`` instead); ``cost`` is None when no price is known. ``metadata``
    keeps what the server sent beyond this (segments, words, its usage as sent).
    """

    text: str
    model: str | None = None
    language: str | None = None
    duration_s: float | None = None
    usage: Usage = Field(default_factory=Usage)
    cost: Cost | None = None
    route: Route | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
