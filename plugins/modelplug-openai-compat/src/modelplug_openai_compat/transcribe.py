"""Speech to text over ``POST {base}/audio/transcriptions``, OpenAI's multipart form
that Groq, whisper.cpp's server, vLLM, LocalAI and Speaches speak too (the kit's
:func:`modelplug_kit.transcription_form` and :func:`modelplug_kit.read_openai_transcript`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug import Route, TranscribeRequest, Transcript
from modelplug_kit import read_openai_transcript, transcription_form

from .errors import ERRORS
from .http import HTTP, request_headers

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["transcribe"]


async def transcribe(route: Route, request: TranscribeRequest, client: CallContext) -> Transcript:
    """The Transcript of one audio file, as the server wrote it."""
    key = client.settings.api_key(route.endpoint.api_key_env, route.provider)
    headers = request_headers(route, key, client.settings, accept="application/json")
    body, content_type = transcription_form(route, request)
    headers["content-type"] = content_type
    url = f"{route.endpoint.base_url}/audio/transcriptions"
    async with HTTP.stream(client, route, url, body=body, headers=headers) as answer:
        raw = answer.whole if answer.whole is not None else await answer.read()
    return read_openai_transcript(route, raw, ERRORS)
