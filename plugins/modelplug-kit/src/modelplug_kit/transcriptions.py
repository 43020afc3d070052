"""OpenAI's ``POST /v1/audio/transcriptions``, shared by every server that speaks it
(OpenAI, Groq, whisper.cpp's server, vLLM, LocalAI, Speaches): the multipart form sent
and the JSON answer read.

The form is ``multipart/form-data`` with the audio as the ``file`` part, its file name
(whose extension is how the server tells the container) and MIME type, then ``model``,
``response_format`` (``json``; ``verbose_json`` for whisper models, which adds the
language and the duration) and the caller's ``language``, ``prompt`` and
``temperature``. The answer is ``{"text": ...}``, with ``usage`` on OpenAI's newer
models: ``{"type": "tokens", "input_tokens", "output_tokens", ...}`` (billed by token)
or ``{"type": "duration", "seconds"}`` (whisper-1, billed by the second).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from modelplug import ErrorClass, TranscribeRequest, Transcript, Usage, audio_mime_type

if TYPE_CHECKING:
    from modelplug import Route

    from modelplug_kit.http import WireErrors

__all__ = ["multipart_form", "read_openai_transcript", "transcription_form"]

# Models whose json answer is the text alone; verbose_json adds language and duration.
# OpenAI's gpt-4o transcribe models take json only (and answer usage in tokens).
_JSON_ONLY = ("gpt-4o",)


def multipart_form(
    fields: Mapping[str, str], files: Mapping[str, tuple[str, bytes, str]]
) -> tuple[bytes, str]:
    """A ``multipart/form-data`` body and its content type: ``fields`` as text parts,
    ``files`` as ``name: (filename, data, mime_type)`` parts (RFC 7578)."""
    boundary = "modelplug-" + uuid.uuid4().hex
    parts: list[bytes] = []
    for name, value in fields.items():
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="{_quoted(name)}"\r\n\r\n'
        parts.append(head.encode() + value.encode() + b"\r\n")
    for name, (filename, data, mime) in files.items():
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{_quoted(name)}"; '
            f'filename="{_quoted(filename)}"\r\nContent-Type: {mime}\r\n\r\n'
        )
        parts.append(head.encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def _quoted(value: str) -> str:
    # RFC 7578 4.2: a quote and a line break cannot stand in a quoted name.
    return value.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")


def transcription_form(route: Route, request: TranscribeRequest) -> tuple[bytes, str]:
    """The multipart body (and its content type) of one transcription request."""
    fields = {"model": route.model, "response_format": response_format(route.model)}
    if request.language is not None:
        fields["language"] = request.language
    if request.prompt is not None:
        fields["prompt"] = request.prompt
    if request.temperature is not None:
        fields["temperature"] = repr(request.temperature)
    for name, value in request.extra.items():
        fields[name] = value if isinstance(value, str) else json.dumps(value)
    mime = audio_mime_type(request.filename) or "application/octet-stream"
    return multipart_form(fields, {"file": (request.filename, request.audio, mime)})


def response_format(model: str) -> str:
    """``json`` for OpenAI's gpt-4o transcribe models (all they take), else
    ``verbose_json`` (whisper and the servers copying it: language and duration too)."""
    return "json" if model.startswith(_JSON_ONLY) else "verbose_json"


def read_openai_transcript(route: Route, raw: bytes, errors: WireErrors) -> Transcript:
    """The Transcript in a ``/v1/audio/transcriptions`` JSON answer; the plugin's
    classified error (``errors``) for an answer that holds no text."""
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise errors.make(
            f"{route.provider} answered the transcription without a text "
            f"(first bytes: {raw[:80]!r})",
            ErrorClass(kind="other", reason="no text in the transcription answer"),
            route,
        )
    usage, seconds = _usage(data.get("usage"))
    duration = _seconds(data.get("duration"))
    language = data.get("language")
    kept = {k: v for k, v in data.items() if k not in ("text", "language", "duration")}
    return Transcript(
        text=data["text"],
        language=language if isinstance(language, str) and language else None,
        duration_s=duration if duration is not None else seconds,
        usage=usage,
        metadata=kept,
    )


def _usage(raw: Any) -> tuple[Usage, float | None]:
    """Tokens when the server counted them; else none reported, and the seconds of a
    ``duration`` usage."""
    if not isinstance(raw, dict):
        return Usage(reported=False), None
    given = raw.get("input_tokens"), raw.get("output_tokens")
    if type(given[0]) is int and type(given[1]) is int and given[0] >= 0 and given[1] >= 0:
        return Usage(input=given[0], output=given[1]), None
    seconds = _seconds(raw.get("seconds")) if raw.get("type") == "duration" else None
    return Usage(reported=False), seconds


def _seconds(value: Any) -> float | None:
    """A length in seconds, when ``value`` is one."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None
