"""What anthropic SDK errors (and this plugin's own) mean for retries and fallbacks.

The SDK is never imported here: an exception can only be one of its errors if the SDK
is already loaded, so the check reads ``sys.modules`` and the error's plain properties.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from typing import Any

from modelplug.builtin.classify import retry_after_of
from modelplug.errors import ErrorClass, class_for_status

__all__ = ["BatchResultError", "ResponseStartTimeout", "classify"]


class ResponseStartTimeout(TimeoutError):
    """The API sent no response headers within the start limit."""


class BatchResultError(Exception):
    """A Batch API request did not succeed: its result was ``errored``, ``canceled`` or
    ``expired``. ``type`` is the API error type for an errored result (for example
    ``overloaded_error``) and ``result`` the result type."""

    def __init__(self, message: str, *, result: str, type: str | None = None) -> None:
        super().__init__(message)
        self.result = result
        self.type = type


def _is_sdk_error(error: BaseException) -> bool:
    sdk = sys.modules.get("anthropic")
    return sdk is not None and isinstance(error, sdk.AnthropicError)


def _is_transport_error(error: BaseException) -> bool:
    transport = sys.modules.get("httpx2")
    return transport is not None and isinstance(error, transport.TransportError)


def _text(error: BaseException) -> str:
    parts = [str(error), str(getattr(error, "api_message", "") or "")]
    return " ".join(parts).lower()


def _status_error(error: Any) -> ErrorClass:
    status: int | None = getattr(error, "status_code", None)
    etype = getattr(error, "type", None)
    # An `error` event inside a 200 stream arrives as a status error with status 200;
    # its type says what happened.
    shown = status if status != 200 else None
    error_class = class_for_status(
        shown, error_type=etype, text=_text(error), retry_after=retry_after_of(error)
    )
    if error_class is None:
        return ErrorClass(
            kind="bad_request",
            status=shown,
            reason=f"bad request ({status})" if shown else "bad request",
        )
    reason = {
        "overloaded": "Anthropic is overloaded",
        "transient": f"Anthropic server error {shown}" if shown else "Anthropic server error",
    }.get(error_class.kind)
    if error_class.kind == "auth" and error_class.status == 401:
        reason = "authentication failed; check the key"
    if error_class.kind == "quota":
        reason = "billing problem"
    if reason is None or (error_class.kind == "transient" and status in (408, 409)):
        return error_class
    return dataclasses.replace(error_class, reason=reason)


def _batch_error(error: BatchResultError) -> ErrorClass:
    if error.result == "errored":
        found = class_for_status(None, error_type=error.type, text=_text(error))
        if found is None:
            kind = "bad_request" if error.type == "invalid_request_error" else "other"
            return ErrorClass(kind=kind, reason=f"the batch request failed: {error.type}")
        return dataclasses.replace(found, reason=f"the batch request failed: {found.reason}")
    if error.result == "expired":
        # The batch ran out of time (24 h); another model may still answer now.
        return ErrorClass(kind="other", fallback=True, reason="the batch request expired")
    if error.result == "canceled":
        return ErrorClass(kind="aborted", reason="the batch was canceled")
    return ErrorClass(kind="other", reason=f"the batch request ended as {error.result}")


def classify(error: BaseException, ours: bool = True) -> ErrorClass | None:
    """The ErrorClass for an anthropic SDK error or this plugin's own; None otherwise.

    ``ours``: the error happened on one of this plugin's routes, so a bare transport
    error (raised from inside a streamed body) is ours to classify too.
    """
    if isinstance(error, asyncio.CancelledError):
        return ErrorClass(kind="aborted", reason="the call was cancelled")
    if isinstance(error, BatchResultError):
        return _batch_error(error)
    if isinstance(error, ResponseStartTimeout):
        return ErrorClass(
            kind="transient", retryable=True, fallback=True, reason="no response in time"
        )
    if _is_sdk_error(error):
        sdk: Any = sys.modules["anthropic"]
        if isinstance(error, sdk.APIStatusError):
            return _status_error(error)
        if isinstance(error, sdk.APITimeoutError):
            return ErrorClass(kind="transient", retryable=True, fallback=True, reason="timed out")
        if isinstance(error, sdk.APIConnectionError):
            return ErrorClass(
                kind="transient", retryable=True, fallback=True, reason="connection lost"
            )
        return None
    if ours and _is_transport_error(error):
        # Raised from inside a stream's body (the SDK wraps only the initial send).
        timed_out = "Timeout" in type(error).__name__
        return ErrorClass(
            kind="transient",
            retryable=True,
            fallback=True,
            reason="timed out" if timed_out else "connection lost",
        )
    return None
