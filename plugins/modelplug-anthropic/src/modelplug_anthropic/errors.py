"""What anthropic SDK errors (and this plugin's own) mean for retries and fallbacks.

The SDK is never imported here: an exception can only be one of its errors if the SDK
is already loaded, so the check reads ``sys.modules`` and the error's plain properties.
What every provider's errors share (the status table, Retry-After, an abort) is core's;
this module adds the SDK's exception types, Anthropic's wording, the batch results and
the stream reader's own errors (:class:`StreamError`, born with their class).
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from modelplug.plugin import (
    ErrorClass,
    ErrorKind,
    ModelError,
    class_for_status,
    classify_generic,
    redact,
    retry_after_of,
)

if TYPE_CHECKING:
    from modelplug.types import Response, Route

__all__ = [
    "BatchResultError",
    "ResponseStartTimeout",
    "StreamError",
    "broken",
    "classify",
    "error_event",
    "malformed",
    "not_an_event_stream",
]


class ResponseStartTimeout(TimeoutError):
    """The API sent no response headers within the start limit."""


class StreamError(ModelError):
    """A Messages API stream that failed after its 200: cut short, unreadable, spliced,
    or an ``error`` event. Carries its ErrorClass and what was produced before."""


def broken(
    route: Route, message: str, *, reason: str, partial: Response | None = None
) -> StreamError:
    """A transient failure: the same request may succeed when sent again."""
    return StreamError(
        message,
        error_class=_transient(reason),
        route=route,
        partial=partial,
    )


def malformed(
    route: Route, problem: str, raw: str, *, partial: Response | None = None
) -> StreamError:
    """An event the reader cannot use: ``problem`` says what is wrong with it, and the
    start of the event is quoted (redacted)."""
    quoted = redact(raw.strip())[:200]
    return broken(
        route,
        f"Anthropic sent {problem}: {quoted!r}",
        reason="malformed stream event",
        partial=partial,
    )


def not_an_event_stream(route: Route, content_type: str, body: bytes) -> StreamError:
    """A 200 that is not a stream (a login portal, a proxy's page): the same request
    would get the same page, so it is not retried, but another model may answer."""
    shown = content_type.split(";")[0].strip() or "a body without a content type"
    start = redact(body[:200].decode("utf-8", "replace").strip())
    return StreamError(
        f"the server answered {shown}, not an event stream; check base_url"
        + (f" (it began {start[:120]!r})" if start else ""),
        error_class=ErrorClass(
            kind="other", fallback=True, status=200, reason="not an event stream"
        ),
        route=route,
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


def _status_error(error: Any) -> ErrorClass:
    # An `error` event inside a 200 stream arrives as a status error with status 200;
    # its type says what happened.
    status: int | None = error.status_code if error.status_code != 200 else None
    found = class_for_status(
        status,
        error_type=getattr(error, "type", None),
        text=_text(error),
        retry_after=retry_after_of(error),
    )
    if found is None:
        # An error event of a type core's table does not know.
        reason = f"bad request ({status})" if status else "bad request"
        return ErrorClass(kind="bad_request", status=status, reason=reason)
    return _in_anthropic_words(found)


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
    """The ErrorClass for an anthropic SDK error or this plugin's own; None otherwise.

    ``ours``: the error happened on one of this plugin's routes, so a bare transport
    error (raised from inside a streamed body) is ours to classify too.
    """
    if isinstance(error, asyncio.CancelledError):
        return classify_generic(error)
    if isinstance(error, StreamError):
        return error.error_class
    if isinstance(error, BatchResultError):
        return _batch_error(error)
    if isinstance(error, ResponseStartTimeout):
        return _transient("no response in time")
    sdk = sys.modules.get("anthropic")
    if sdk is not None and isinstance(error, sdk.APIStatusError):
        return _status_error(error)
    # Not left to core, which reads the whole cause chain (a timeout raised over a
    # cancelled wait would read as an abort) and knows only some transport names (a
    # ConnectError would be "other"). An SDK connection error, or a transport error on
    # our route (raised inside a stream's body: the SDK wraps only the initial send),
    # is a lost connection or a timeout, to retry.
    if (sdk is not None and isinstance(error, sdk.APIConnectionError)) or (
        ours and _is_transport_error(error)
    ):
        return _transient("timed out" if "Timeout" in type(error).__name__ else "connection lost")
    return None
