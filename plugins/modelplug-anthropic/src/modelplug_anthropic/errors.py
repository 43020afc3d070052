"""This plugin's errors, each born with its ErrorClass, and what anthropic SDK errors
(the Batch API's) mean for retries and fallbacks.

The Messages stream goes through the kit's HTTP path, which makes its failures with
:data:`ERRORS` (an :class:`AnthropicErrors`): an error status is a :class:`StatusError`
read from Anthropic's error body (``{"type": "error", "error": {"type":
"overloaded_error", "message": ...}}``), anything else a :class:`StreamError`. The SDK
is never imported here: an exception can only be one of its errors if the SDK is already
loaded, so the check reads ``sys.modules`` and the error's plain properties. What every
provider's errors share (the status table, Retry-After, an abort) is core's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from modelplug import (
    ErrorClass,
    ErrorKind,
    ModelError,
    class_for_status,
    classify_generic,
    redact,
    retry_after_from_headers,
    retry_after_of,
)
from modelplug_kit import StatusError as KitStatusError
from modelplug_kit import WireErrors, error_body, error_message, error_type

if TYPE_CHECKING:
    from modelplug import Response, Route

__all__ = [
    "ERRORS",
    "AnthropicError",
    "AnthropicErrors",
    "BatchResultError",
    "StatusError",
    "StreamError",
    "classify",
    "error_event",
    "malformed",
]


class AnthropicError(ModelError):
    """Any failure of a Messages API call."""


class StatusError(KitStatusError, AnthropicError):
    """The API answered with an error status. ``request_id`` is Anthropic's
    ``request-id`` header (what its support asks for); ``headers`` and ``body`` are kept
    redacted: a proxy may echo the key it refused."""


class StreamError(AnthropicError):
    """Every other failure: nothing listening, a timeout, a 200 that is no stream, a
    stream cut short, unreadable or spliced, an ``error`` event. Carries what was
    produced before it."""


class AnthropicErrors(WireErrors):
    """How the kit's HTTP path makes this plugin's errors."""

    error = StreamError
    status_error = StatusError

    def status(
        self, status: int, headers: Mapping[str, str], body: bytes, route: Route
    ) -> ModelError:
        data = error_body(body)
        if status < 300:
            # A JSON error answered with 200 reads as the same error streamed.
            return error_event(route, data if isinstance(data, Mapping) else {"error": data})
        etype = error_type(data)
        message = error_message(data)
        retry_after = retry_after_from_headers(headers)
        found = status_class(status, etype, message, retry_after)
        text = f"{route.provider} answered {status}"
        if message:
            text += f": {message}"
        if etype and etype not in message:
            text += f" ({etype})"
        if retry_after is not None:
            text += f"; retry after {retry_after:g} s"
        request_id = {k.lower(): v for k, v in headers.items()}.get("request-id")
        if request_id:
            text += f"; request-id {request_id}"
        return self.make(text, found, route, status=status, headers=headers, body=data)


ERRORS = AnthropicErrors("anthropic")


def malformed(
    route: Route, problem: str, raw: str, *, partial: Response | None = None
) -> ModelError:
    """An event the reader cannot use: ``problem`` says what is wrong with it, and the
    start of the event is quoted (redacted)."""
    quoted = redact(raw.strip())[:200]
    return ERRORS.transient(
        route,
        f"Anthropic sent {problem}: {quoted!r}",
        reason="malformed stream event",
        partial=partial,
    )


def error_event(
    route: Route, payload: Mapping[str, Any], *, partial: Response | None = None
) -> StreamError:
    """An ``error`` event inside a 200 stream, classified by its error type."""
    error = payload.get("error")
    details: Mapping[str, Any] = error if isinstance(error, Mapping) else {}
    given_type, given_text = details.get("type"), details.get("message")
    etype = given_type if isinstance(given_type, str) else None
    text = given_text if isinstance(given_text, str) else ""
    if not details and isinstance(error, str):
        text = error
    found = class_for_status(None, error_type=etype, text=text.lower())
    if found is None and etype == "invalid_request_error":
        found = ErrorClass(kind="bad_request", reason="bad request")
    elif found is None:
        # A type the table does not know (a proxy's "stream_error"): the server failed
        # while answering, after a 200; the same request may well succeed again.
        found = _transient(f"error event {etype or 'without a type'}")
    else:
        found = _in_anthropic_words(found)
    said = ": ".join(part for part in (etype, redact(text)[:500]) if part)
    return StreamError(
        f"Anthropic reported an error mid-stream: {said or 'no details'}",
        error_class=found,
        route=route,
        partial=partial,
    )


class BatchResultError(Exception):
    """A Batch API request did not succeed: its result was ``errored``, ``canceled`` or
    ``expired``. ``type`` is the API error type for an errored result (for example
    ``overloaded_error``) and ``result`` the result type."""

    def __init__(self, message: str, *, result: str, type: str | None = None) -> None:
        super().__init__(message)
        self.result = result
        self.type = type


def _is_transport_error(error: BaseException) -> bool:
    transport = sys.modules.get("httpx2")
    return transport is not None and isinstance(error, transport.TransportError)


def _text(error: BaseException) -> str:
    parts = [str(error), str(getattr(error, "api_message", "") or "")]
    return " ".join(parts).lower()


def _transient(reason: str) -> ErrorClass:
    return ErrorClass(kind="transient", retryable=True, fallback=True, reason=reason)


def _in_anthropic_words(found: ErrorClass) -> ErrorClass:
    """Core's class for a status error, its reason said as Anthropic's errors page
    says it where that tells the reader more."""
    if found.kind == "overloaded":
        reason = "Anthropic is overloaded"
    elif found.kind == "transient" and found.status not in (408, 409):
        # Core's "server error 503"; a request timeout or a conflict keeps core's words.
        reason = f"Anthropic {found.reason}"
    elif found.kind == "auth" and found.status == 401:
        reason = "authentication failed; check the key"
    elif found.kind == "quota":
        reason = "billing problem"
    else:
        return found
    return dataclasses.replace(found, reason=reason)


def status_class(
    status: int | None, etype: str | None, text: str, retry_after: float | None = None
) -> ErrorClass:
    """The class of an error status (None: an error inside a 200), by core's table and
    in Anthropic's words; a status or type the table does not know is a bad request."""
    found = class_for_status(status, error_type=etype, text=text, retry_after=retry_after)
    if found is None:
        reason = f"bad request ({status})" if status else "bad request"
        return ErrorClass(kind="bad_request", status=status, reason=reason)
    return _in_anthropic_words(found)


def _status_error(error: Any) -> ErrorClass:
    # The SDK raises an `error` event inside a 200 stream as a status error with status
    # 200; its type says what happened.
    status: int | None = error.status_code if error.status_code != 200 else None
    return status_class(status, getattr(error, "type", None), _text(error), retry_after_of(error))


BATCH_ENDINGS = {
    # The batch ran out of time (24 h); another model may still answer now.
    "expired": ErrorClass(kind="other", fallback=True, reason="the batch request expired"),
    "canceled": ErrorClass(kind="aborted", reason="the batch was canceled"),
}


def _batch_error(error: BatchResultError) -> ErrorClass:
    if error.result == "errored":
        found = class_for_status(None, error_type=error.type, text=_text(error))
        if found is None:
            kind: ErrorKind = "bad_request" if error.type == "invalid_request_error" else "other"
            return ErrorClass(kind=kind, reason=f"the batch request failed: {error.type}")
        return dataclasses.replace(found, reason=f"the batch request failed: {found.reason}")
    return BATCH_ENDINGS.get(error.result) or ErrorClass(
        kind="other", reason=f"the batch request ended as {error.result}"
    )


def classify(error: BaseException, ours: bool = True) -> ErrorClass | None:
    """The ErrorClass for what is not a ModelError (core reads a ModelError's own class
    first, this plugin's errors included): the SDK's errors (the Batch API's), a batch
    result, a transport error on this plugin's route, an abort; None otherwise.

    ``ours``: the error happened on one of this plugin's routes, so a bare transport
    error (raised while the SDK reads a batch's results) is ours to classify too.
    """
    if isinstance(error, asyncio.CancelledError):
        return classify_generic(error)
    if isinstance(error, BatchResultError):
        return _batch_error(error)
    sdk = sys.modules.get("anthropic")
    if sdk is not None and isinstance(error, sdk.APIStatusError):
        return _status_error(error)
    # Not left to core, which reads the whole cause chain (a timeout raised over a
    # cancelled wait would read as an abort) and knows only some transport names (a
    # ConnectError would be "other"). An SDK connection error, or a transport error on
    # our route (raised inside a body the SDK reads: it wraps only the initial send),
    # is a lost connection or a timeout, to retry.
    if (sdk is not None and isinstance(error, sdk.APIConnectionError)) or (
        ours and _is_transport_error(error)
    ):
        return _transient("timed out" if "Timeout" in type(error).__name__ else "connection lost")
    return None
