"""Running one transcription call: the request checked, the plugin's answer awaited,
the Transcript finished (answering model, route, cost) and failures turned into
ModelError.

The speech counterpart of :mod:`modelplug.client.embed_call`, and apart from client.py
for the same reason (the pydantic types load here, not when a Client is made).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from modelplug.client.plugin_answer import plugin_answer
from modelplug.contract.errors import RequestError
from modelplug.contract.secrets import redact_data
from modelplug.contract.transcripts import TranscribeRequest, Transcript

if TYPE_CHECKING:
    from modelplug.client.surface import ClientSurface
    from modelplug.contract.routes import Route

__all__ = ["guarded_transcribe", "transcribe_request"]

_FIELDS = ("language", "prompt", "temperature", "extra")


def transcribe_request(audio: bytes, filename: str, fields: Mapping[str, Any]) -> TranscribeRequest:
    """The TranscribeRequest for what the caller gave; RequestError names what is wrong."""
    unknown = sorted(set(fields) - set(_FIELDS))
    if unknown:
        raise RequestError(
            f"transcribe() takes no {', '.join(unknown)}: provider fields go in "
            f"extra={{...}} (e.g. extra={{{unknown[0]!r}: ...}})"
        )
    if not isinstance(audio, (bytes, bytearray, memoryview)):
        raise RequestError(
            f"audio must be the file's bytes, not {type(audio).__name__} (read a path "
            "with Path(...).read_bytes())"
        )
    if not audio:
        raise RequestError("audio is empty: give the bytes of an audio file")
    if not isinstance(filename, str) or "." not in filename:
        raise RequestError(
            f"filename {filename!r} has no extension: the servers tell the audio's "
            "container by it (clip.wav, talk.mp3, memo.m4a)"
        )
    try:
        return TranscribeRequest(audio=bytes(audio), filename=filename, **fields)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'request'}: {e['msg']}" for e in exc.errors()
        )
        raise RequestError(f"invalid transcription request: {problems}") from None


async def guarded_transcribe(
    client: ClientSurface,
    spec: str | Route | None,
    audio: bytes,
    filename: str,
    fields: Mapping[str, Any],
) -> Transcript:
    """:meth:`Client.atranscribe`'s body."""
    request = transcribe_request(audio, filename, fields)
    route = client.route_for(spec)
    result = await plugin_answer(client, route, client.open_transcribe(route, request))
    return _finish(client, route, result)


def _finish(client: ClientSurface, route: Route, result: Transcript) -> Transcript:
    answered = result.model or route.name
    answering = result.route if isinstance(result.route, type(route)) else route
    updates: dict[str, Any] = {"model": answered, "route": answering}
    metadata = redact_data(result.metadata)
    if metadata is not result.metadata:
        updates["metadata"] = metadata
    if result.cost is None and result.usage.reported:
        updates["cost"] = client.price(answering, result.usage)
    return result.model_copy(update=updates)
