"""``POST /v1/audio/transcriptions`` in OpenAI's shape, on ``Client.atranscribe``.

The openai SDK's ``audio.transcriptions.create`` sends a ``multipart/form-data`` body:
the audio as the ``file`` part (with its file name, whose extension is the container),
``model``, and optionally ``language``, ``prompt``, ``temperature`` and
``response_format``. The form is read with the standard library's MIME parser, bounded
by ``[gateway] max_request_bytes`` like every body. The answer is ``{"text": ...}`` with
``usage`` when known (tokens, or the audio's seconds), ``verbose_json`` adds the task,
language, duration and the upstream's segments, and ``text`` is the text alone."""

from __future__ import annotations

import asyncio
import email.parser
import email.policy
import math
import time
from typing import TYPE_CHECKING, Any

from .asgi import Disconnected
from .auth import Refusal
from .model_spec import check_model
from .one_answer import OneAnswer, answer_headers
from .shapes.base import ShapeError

if TYPE_CHECKING:
    from modelplug import Transcript

    from .app_protocol import GatewayApp
    from .asgi import Receive, Scope, Send

__all__ = ["Form", "handle", "parse_form", "transcript_body"]

_FIELDS = frozenset({"file", "model", "language", "prompt", "temperature", "response_format"})
_FORMATS = ("json", "text", "verbose_json")


class Form:
    """A transcription request as the form gave it."""

    __slots__ = ("audio", "fields", "filename", "model", "response_format")

    def __init__(
        self, model: str, audio: bytes, filename: str, response_format: str, fields: dict[str, Any]
    ) -> None:
        self.model = model
        self.audio = audio
        self.filename = filename
        self.response_format = response_format
        self.fields = fields


def parse_form(content_type: bytes, body: bytes) -> Form:
    """Read a multipart/form-data body; ShapeError naming what is wrong."""
    kind = content_type.split(b";", 1)[0].strip().lower()
    if kind != b"multipart/form-data" or b"boundary=" not in content_type:
        raise ShapeError(
            "the body must be multipart/form-data (the file as the 'file' part), as the "
            "openai SDK's audio.transcriptions.create sends it",
            status=415,
        )
    head = b"Content-Type: " + content_type + b"\r\n\r\n"
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    if not message.is_multipart():
        raise ShapeError("the multipart body could not be read")
    parts: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str) or not name:
            raise ShapeError("a part of the form has no name")
        if name not in _FIELDS:
            raise ShapeError(f"unknown field: {name}", param=name)
        data = part.get_payload(decode=True)
        parts[name] = (part.get_filename(), data if isinstance(data, bytes) else b"")
    return _form(parts)


def _form(parts: dict[str, tuple[str | None, bytes]]) -> Form:
    if "file" not in parts or not parts["file"][1]:
        raise ShapeError("'file' must be the audio file's bytes, with a file name", param="file")
    filename, audio = parts["file"]
    if not filename or "." not in filename:
        raise ShapeError(
            "'file' needs a file name with an extension (clip.wav, talk.mp3): it tells the "
            "audio's container",
            param="file",
        )
    texts = {name: _text(data, name) for name, (_, data) in parts.items() if name != "file"}
    model = texts.pop("model", "")
    if not model:
        raise ShapeError("'model' must be a non-empty string", param="model")
    check_model(model)
    response_format = texts.pop("response_format", "json") or "json"
    if response_format not in _FORMATS:
        raise ShapeError(
            f"'response_format' must be one of {', '.join(_FORMATS)} here",
            param="response_format",
        )
    fields: dict[str, Any] = {k: v for k, v in texts.items() if v}
    if "temperature" in fields:
        try:
            fields["temperature"] = float(fields["temperature"])
        except ValueError:
            raise ShapeError("'temperature' must be a number", param="temperature") from None
    return Form(model, audio, filename, response_format, fields)


def _text(data: bytes, name: str) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise ShapeError(f"'{name}' must be UTF-8 text", param=name) from None


def transcript_body(transcript: Transcript, response_format: str) -> dict[str, Any]:
    """OpenAI's JSON answer for ``transcript`` (``json`` or ``verbose_json``)."""
    body: dict[str, Any] = {"text": transcript.text}
    if response_format == "verbose_json":
        body = {
            "task": "transcribe",
            "language": transcript.language or "",
            "duration": transcript.duration_s or 0.0,
            "text": transcript.text,
        }
        segments = transcript.metadata.get("segments")
        if isinstance(segments, list):
            body["segments"] = segments
    usage = transcript.usage
    if usage.reported:
        body["usage"] = {
            "type": "tokens",
            "input_tokens": usage.input,
            "output_tokens": usage.output,
            "total_tokens": usage.input + usage.output,
        }
    elif transcript.duration_s is not None:
        body["usage"] = {"type": "duration", "seconds": math.ceil(transcript.duration_s)}
    return body


async def read_body(gateway: GatewayApp, scope: Scope, receive: Receive) -> tuple[bytes, bytes]:
    """The content type and the body, bounded in size and time as every body is."""
    limit = gateway.options.max_request_bytes
    content_type = b""
    for name, value in scope["headers"]:
        if name == b"content-type":
            content_type = value
        elif name == b"content-length" and value.isdigit() and int(value) > limit:
            raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(gateway.options.body_timeout):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise Disconnected
                part = message.get("body", b"")
                size += len(part)
                if size > limit:
                    raise _too_large(limit)
                chunks.append(part)
                if not message.get("more_body"):
                    break
    except TimeoutError:
        raise ShapeError(
            f"the body did not arrive within {gateway.options.body_timeout:g} s "
            "([gateway] body_timeout)",
            status=408,
            kind="timeout_error",
        ) from None
    return content_type, b"".join(chunks)


def _too_large(limit: int) -> ShapeError:
    return ShapeError(
        f"the body is larger than {limit} bytes ([gateway] max_request_bytes)",
        status=413,
        kind="request_too_large",
    )


async def handle(gateway: GatewayApp, scope: Scope, receive: Receive, send: Send) -> None:
    shape = gateway.shapes["openai"]
    one = OneAnswer("transcriptions", time.perf_counter())
    try:
        if gateway.draining:
            one.status = 503
            await gateway.send_error(send, shape, 503, "the gateway is shutting down")
            return
        try:
            gateway.precheck(scope)  # who cannot be admitted: refused before the body
            form = parse_form(*await read_body(gateway, scope, receive))
            one.model = form.model
            gateway.check_served(form.model)
            one.ticket = await gateway.admit(scope, form.model)
        except (ShapeError, Refusal, Disconnected) as exc:
            await one.refused(gateway, send, shape, exc)
            return
        try:
            result = await gateway.client.atranscribe(
                gateway.routes.get(form.model), form.audio, filename=form.filename, **form.fields
            )
        except Exception as exc:  # a ModelError, a RequestError, a bad spec or settings
            await one.call_failed(gateway, send, shape, exc)
            return
        one.result = result
        headers = answer_headers(result)
        if form.response_format == "text":
            await _send_text(send, result.text, headers)
        else:
            await gateway.send_json(
                send, 200, transcript_body(result, form.response_format), headers
            )
        gateway.metrics.usage(
            result.usage.input, result.usage.output, result.cost.amount if result.cost else None
        )
    finally:
        await one.end(gateway, scope)


async def _send_text(send: Send, text: str, headers: list[tuple[bytes, bytes]]) -> None:
    data = text.encode()
    head = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(data)).encode()),
        *headers,
    ]
    await send({"type": "http.response.start", "status": 200, "headers": head})
    await send({"type": "http.response.body", "body": data})
