"""Speech to text on Gemini: the audio sent as ``inline_data`` beside an instruction to
transcribe it, through ``POST {model}:generateContent`` (Google's "audio understanding":
Gemini has no transcription endpoint of its own, the model reads the audio as input).

The MIME type comes from the file name's extension (``modelplug.audio_mime_type``); the
caller's ``language`` and ``prompt`` join the instruction and ``temperature`` the
generation config. Inline data suits files up to Google's request limit (20 MB).
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

from modelplug import (
    RequestError,
    TranscribeRequest,
    Transcript,
    Usage,
    audio_mime_type,
    redact_data,
)

from .errors import ERRORS, google_error
from .http import HTTP, prepare

if TYPE_CHECKING:
    from modelplug import CallContext, Route

__all__ = ["INSTRUCTION", "read_transcript", "transcribe", "transcribe_body"]

INSTRUCTION = (
    "Transcribe this audio exactly as spoken, word for word. Answer with the transcript "
    "text only: no title, no comments, no timestamps."
)


def transcribe_body(request: TranscribeRequest) -> dict[str, Any]:
    """The generateContent body: the instruction, then the audio."""
    if request.extra:
        raise RequestError(
            f"gemini transcription takes no {', '.join(sorted(request.extra))} in extra"
        )
    mime = audio_mime_type(request.filename)
    if mime is None:
        raise RequestError(
            f"{request.filename!r} does not name an audio type Gemini reads (wav, mp3, "
            "aiff, aac, ogg, flac)"
        )
    words = [INSTRUCTION]
    if request.language:
        words.append(f"The speech is in the language {request.language!r}.")
    if request.prompt:
        words.append(f"Words it may contain: {request.prompt}")
    audio = base64.b64encode(request.audio).decode()
    body: dict[str, Any] = {
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"text": " ".join(words)},
                    {"inline_data": {"mime_type": mime, "data": audio}},
                ],
            }
        ]
    }
    if request.temperature is not None:
        body["generationConfig"] = {"temperature": request.temperature}
    return body


def read_transcript(route: Route, answer: dict[str, Any]) -> Transcript:
    """The text of a generateContent answer (thought parts left out) and its usage."""
    candidates = answer.get("candidates")
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    content = first.get("content") if isinstance(first, dict) else None
    parts = content.get("parts") if isinstance(content, dict) else None
    texts = [
        part["text"]
        for part in (parts if isinstance(parts, list) else [])
        if isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought")
    ]
    if not texts:
        reason = first.get("finishReason") if isinstance(first, dict) else None
        raise ERRORS.transient(
            route,
            f"{route.provider} answered the transcription without a text"
            + (f" (finishReason {reason})" if isinstance(reason, str) else ""),
            reason="no text in the answer",
        )
    meta = answer.get("usageMetadata")
    usage = Usage(reported=False)
    if isinstance(meta, dict):
        read, wrote = meta.get("promptTokenCount"), meta.get("candidatesTokenCount")
        if type(read) is int and type(wrote) is int and read >= 0 and wrote >= 0:
            usage = Usage(input=read, output=wrote)
    kept = {k: v for k, v in answer.items() if k in ("usageMetadata", "modelVersion")}
    return Transcript(text="".join(texts).strip(), usage=usage, metadata=kept)


async def transcribe(route: Route, request: TranscribeRequest, client: CallContext) -> Transcript:
    """The Transcript of one audio file, read by the route's model."""
    payload = json.dumps(transcribe_body(request)).encode()
    target, headers = await prepare(route, client)
    answer = await HTTP.call_json(
        client,
        route,
        f"{target.model_url}:generateContent",
        headers=headers,
        method="POST",
        body=payload,
    )
    if answer.get("error"):
        raise google_error(None, redact_data(answer), route)  # an error answered with 200
    return read_transcript(route, answer)
