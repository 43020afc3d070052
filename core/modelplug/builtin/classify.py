"""The generic error classifier: the answer when no provider plugin recognised an error.

It reads only plain properties — ``status``/``status_code``, ``code``, ``type``,
``error.type``, ``body``, the message, ``Retry-After`` headers and the ``__cause__``
chain — so it classifies any SDK's or transport's errors without importing them.
"""

from __future__ import annotations

import errno
import time
from collections.abc import Iterator, Mapping
from typing import Any

from modelplug.contract.errors import CONTEXT_PHRASES, ErrorClass, ModelError, class_for_status
from modelplug.contract.hookspecs import hookimpl
from modelplug.contract.routes import Route

__all__ = [
    "CONTEXT_PHRASES",
    "classify",
    "classify_generic",
    "parse_retry_after",
    "retry_after_from_headers",
    "retry_after_of",
    "status_of",
]

TRANSIENT_CODES = {
    "ECONNRESET",
    "ETIMEDOUT",
    "EPIPE",
    "ECONNABORTED",
    "EHOSTUNREACH",
    "ENETUNREACH",
    "EAI_AGAIN",
    "UND_ERR_SOCKET",
}
TRANSIENT_NAMES = (
    "Timeout",
    "ReadError",
    "WriteError",
    "RemoteProtocolError",
    "APIConnectionError",
    "ProtocolError",
    "IncompleteRead",
)
TRANSIENT_PHRASES = ("socket hang up", "terminated", "connection reset", "server disconnected")


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            for inner in current.exceptions:
                yield from _chain(inner)
        current = current.__cause__ or current.__context__


def _get(obj: Any, *path: str) -> Any:
    for name in path:
        if obj is None:
            return None
        obj = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
    return obj


def status_of(error: BaseException) -> int | None:
    for candidate in (
        _get(error, "status_code"),
        _get(error, "status"),
        _get(error, "response", "status_code"),
    ):
        if isinstance(candidate, int) and not isinstance(candidate, bool):
            return candidate
    return None


def error_type_of(error: BaseException) -> str | None:
    for candidate in (
        _get(error, "type"),
        _get(error, "error", "type"),
        _get(error, "body", "error", "type"),
        _get(error, "body", "type"),
    ):
        if isinstance(candidate, str):
            return candidate
    return None


def _headers(error: BaseException) -> Any:
    return _get(error, "headers") or _get(error, "response", "headers")


def retry_after_of(error: BaseException, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait: ``retry-after-ms``, ``Retry-After`` as
    seconds or as an HTTP date, or an explicit ``retry_after`` attribute."""
    explicit = _get(error, "retry_after")
    if isinstance(explicit, int | float) and not isinstance(explicit, bool):
        return max(0.0, float(explicit))
    headers = _headers(error)
    if headers is None:
        return None
    return retry_after_from_headers(headers, now)


def retry_after_from_headers(headers: Any, now: float | None = None) -> float | None:
    """Seconds a response's headers ask us to wait: ``retry-after-ms``, else
    ``Retry-After`` as seconds or an HTTP date. Header names match in any case, in a
    plain dict too; an unreadable ``retry-after-ms`` leaves ``Retry-After`` to answer."""
    try:
        lower = {str(k).lower(): v for k, v in headers.items()}
    except (AttributeError, TypeError, ValueError):
        return None
    millis = lower.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except (TypeError, ValueError):
            pass
    return parse_retry_after(lower.get("retry-after"), now)


def parse_retry_after(value: Any, now: float | None = None) -> float | None:
    if value is None:
        return None
    text = str(value).strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    # An HTTP date is rare; its parser (email.utils) is not worth importing at startup.
    import email.utils

    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def classify(error: BaseException) -> ErrorClass:
    """Classify any exception from its plain properties."""
    if isinstance(error, ModelError):
        return error.error_class
    import asyncio

    for item in _chain(error):
        if isinstance(item, asyncio.CancelledError | KeyboardInterrupt | GeneratorExit):
            return ErrorClass(kind="aborted", reason="the call was cancelled")
    status = status_of(error)
    etype = error_type_of(error)
    text = " ".join(str(e) for e in _chain(error)).lower()
    retry_after = retry_after_of(error)
    by_status = class_for_status(status, error_type=etype, text=text, retry_after=retry_after)
    if by_status is not None:
        return by_status
    for item in _chain(error):
        if isinstance(item, ConnectionRefusedError) or _get(item, "errno") == errno.ECONNREFUSED:
            return ErrorClass(kind="unreachable", fallback=True, reason="connection refused")
        code = _get(item, "code")
        name = type(item).__name__
        if (
            isinstance(item, ConnectionError | TimeoutError)
            or (isinstance(code, str) and code in TRANSIENT_CODES)
            or any(n in name for n in TRANSIENT_NAMES)
        ):
            return ErrorClass(
                kind="transient",
                retryable=True,
                fallback=True,
                reason="timed out" if "imeout" in name else "connection lost",
            )
    if any(p in text for p in TRANSIENT_PHRASES):
        return ErrorClass(kind="transient", retryable=True, fallback=True, reason="connection lost")
    if status is not None and status >= 500:
        return ErrorClass(
            kind="transient",
            retryable=True,
            fallback=True,
            status=status,
            reason=f"server error {status}",
        )
    return ErrorClass(kind="other", reason=type(error).__name__)


# The name the plugin kit exports: core's classifier as a function a plugin can call
# and refine.
classify_generic = classify


@hookimpl(trylast=True)
def modelplug_classify_error(error: BaseException, route: Route | None) -> Any:
    return classify(error)
