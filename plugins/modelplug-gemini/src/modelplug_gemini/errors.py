"""This plugin's errors, each born with its ErrorClass, and the reading of Google's
error bodies (``google.rpc.Status``: code, message, status, details). The kit's HTTP
path makes them through :data:`ERRORS`, a :class:`GeminiErrors`.

What Google's statuses mean here:

- 429 ``RESOURCE_EXHAUSTED``: a rate limit whose ``RetryInfo.retryDelay`` ("30s") is
  the wait; a per-day quota (a ``QuotaFailure`` violation on a ``...PerDay...`` quota,
  or a quota of ``limit: 0``) is ``quota``: no short wait fixes it.
- 503 ``UNAVAILABLE`` and "overloaded": overloaded. 500 ``INTERNAL``, 504: transient.
- 400 ``INVALID_ARGUMENT`` about the token count: context overflow; an invalid API key
  (``API_KEY_INVALID``, a 400 on the Gemini API): auth; other 400s: bad request.
- 401 ``UNAUTHENTICATED``, 403 ``PERMISSION_DENIED``: auth. 404: not found.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from modelplug import ErrorClass, ModelError, class_for_status, retry_after_from_headers
from modelplug_kit import WireErrors, error_body, error_message

from .options import SECTION

if TYPE_CHECKING:
    from modelplug import Response, Route

__all__ = [
    "ERRORS",
    "GeminiError",
    "GeminiErrors",
    "google_error",
    "google_status",
    "malformed_call",
    "parse_duration",
    "stream_broken",
]

CONTEXT_PHRASES = (
    "input token count",
    "exceeds the maximum number of tokens",
    "token limit",
    "too many tokens",
    "context window",
    "prompt is too long",
)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


class GeminiError(ModelError):
    """Any failure of a Gemini or Vertex AI call. ``status_code`` is the HTTP status,
    ``google_status`` Google's status name (``RESOURCE_EXHAUSTED``), ``body`` the error
    as parsed (redacted)."""

    def __init__(
        self,
        message: str,
        *,
        error_class: ErrorClass,
        route: Route | None,
        status_code: int | None = None,
        google_status: str | None = None,
        body: Any = None,
        partial: Response | None = None,
    ) -> None:
        self.status_code = status_code
        self.google_status = google_status
        self.body = body
        super().__init__(message, error_class=error_class, route=route, partial=partial)


def parse_duration(value: Any) -> float | None:
    """Seconds of a protobuf Duration in JSON ("30s", "36.429760048s"), else None."""
    if not isinstance(value, str):
        return None
    match = _DURATION.match(value)
    return float(match.group(1)) if match else None


def google_status(body: Any) -> Mapping[str, Any]:
    """The ``error`` object of a Google error body (also inside a one-element list, as
    the JSON-array stream sends it), or {}."""
    if isinstance(body, list) and body:
        body = body[0]
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping):
            return error
    return {}


def _details(error: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    details = error.get("details")
    if not isinstance(details, list):
        return []
    return [d for d in details if isinstance(d, Mapping)]


def _of_type(detail: Mapping[str, Any], name: str) -> bool:
    kind = detail.get("@type")
    return isinstance(kind, str) and kind.endswith(name)


def _retry_delay(error: Mapping[str, Any]) -> float | None:
    for detail in _details(error):
        if _of_type(detail, "google.rpc.RetryInfo"):
            return parse_duration(detail.get("retryDelay"))
    return None


def _is_daily_quota(error: Mapping[str, Any], message: str) -> bool:
    """A quota that no short wait refills: a per-day quota, or one of zero."""
    if "limit: 0," in message or message.rstrip().endswith("limit: 0"):
        return True
    for detail in _details(error):
        if not _of_type(detail, "google.rpc.QuotaFailure"):
            continue
        violations = detail.get("violations")
        for violation in violations if isinstance(violations, list) else []:
            if isinstance(violation, Mapping):
                quota = f"{violation.get('quotaId', '')} {violation.get('quotaMetric', '')}"
                if "PerDay" in quota or "per_day" in quota:
                    return True
    return False


def _reasons(error: Mapping[str, Any]) -> set[str]:
    """The ``ErrorInfo`` reasons (``API_KEY_INVALID``...) of an error."""
    return {
        str(d.get("reason"))
        for d in _details(error)
        if _of_type(d, "google.rpc.ErrorInfo") and d.get("reason")
    }


def classify(status: int | None, error: Mapping[str, Any], retry_after: float | None) -> ErrorClass:
    """The ErrorClass of a Google error (HTTP status plus the body's ``error``)."""
    message = str(error.get("message") or "")
    name = str(error.get("status") or "")
    lowered = message.lower()
    code = error.get("code")
    if status is None and isinstance(code, int) and not isinstance(code, bool):
        status = code
    delay = _retry_delay(error)
    wait = delay if delay is not None else retry_after
    if status == 429 or name == "RESOURCE_EXHAUSTED":
        if _is_daily_quota(error, message):
            return ErrorClass(
                kind="quota", fallback=True, status=status, reason="the daily quota is exhausted"
            )
        return ErrorClass(
            kind="rate_limit",
            retryable=True,
            fallback=True,
            retry_after=wait,
            status=status,
            reason="rate limited",
        )
    if status == 503 or name == "UNAVAILABLE" or "overloaded" in lowered:
        return ErrorClass(
            kind="overloaded",
            retryable=True,
            fallback=True,
            retry_after=wait,
            status=status,
            reason="the model is overloaded",
        )
    if "API_KEY_INVALID" in _reasons(error) or "api key not valid" in lowered:
        return ErrorClass(
            kind="auth", fallback=True, status=status, reason="the API key is invalid"
        )
    if name == "UNAUTHENTICATED":
        return ErrorClass(kind="auth", fallback=True, status=status, reason="not authenticated")
    if name == "PERMISSION_DENIED":
        return ErrorClass(kind="auth", fallback=True, status=status, reason="permission denied")
    if status in (None, 400) and any(p in lowered for p in CONTEXT_PHRASES):
        return ErrorClass(
            kind="context_overflow",
            status=status,
            reason="the prompt is longer than the model's context window",
        )
    if name == "NOT_FOUND":
        return ErrorClass(kind="not_found", fallback=True, status=status, reason="model not found")
    if name in ("INTERNAL", "DEADLINE_EXCEEDED", "ABORTED"):
        return ErrorClass(
            kind="transient",
            retryable=True,
            fallback=True,
            retry_after=wait,
            status=status,
            reason=f"server error ({name})",
        )
    by_status = class_for_status(status, text=message, retry_after=wait)
    if by_status is not None:
        if by_status.kind == "not_found":
            return dataclasses.replace(by_status, reason="model not found")
        return by_status
    return ErrorClass(
        kind="transient",
        retryable=True,
        fallback=True,
        status=status,
        reason="the server reported an error",
    )


def google_error(
    status: int | None,
    body: Any,
    route: Route,
    *,
    retry_after: float | None = None,
    partial: Response | None = None,
) -> GeminiError:
    """The error of a Google error body, parsed and redacted: a status answer's, or
    (``status`` None) an error object inside the stream, whose ``code`` is its status."""
    error = google_status(body)
    message = str(error.get("message") or "") if error else error_message(body)
    error_class = classify(status, error, retry_after)
    name = error.get("status") if isinstance(error.get("status"), str) else None
    where = f"{route.provider} answered {status}" if status else f"{route.provider} failed"
    if name:
        where += f" {name}"
    line = f"{where}: {message}" if message else where
    if error_class.retry_after is not None:
        line += f"; retry after {error_class.retry_after:g} s"
    return GeminiError(
        line,
        error_class=error_class,
        route=route,
        status_code=status,
        google_status=name,
        body=body,
        partial=partial,
    )


class GeminiErrors(WireErrors):
    """The kit's HTTP path makes this plugin's errors: every one a :class:`GeminiError`,
    a status answer read as a Google error body."""

    error = GeminiError

    def status(
        self, status: int, headers: Mapping[str, str], body: bytes, route: Route
    ) -> GeminiError:
        # A JSON error answered with 200 reads as the same error streamed: its own code
        # is its status. The body is redacted: a server may echo the key it refused.
        return google_error(
            status if status >= 300 else None,
            error_body(body),
            route,
            retry_after=retry_after_from_headers(headers),
        )


ERRORS = GeminiErrors(SECTION)


def stream_broken(
    route: Route, message: str, *, reason: str, partial: Response | None = None
) -> ModelError:
    """A transient failure: the same request may succeed when tried again."""
    return ERRORS.transient(route, message, reason=reason, partial=partial)


def malformed_call(route: Route, message: str, partial: Response | None) -> GeminiError:
    """``finishReason: MALFORMED_FUNCTION_CALL``: the model wrote a call the API could
    not parse. Asking again usually works, so it is retryable."""
    line = "the model wrote a malformed function call (finishReason MALFORMED_FUNCTION_CALL)"
    if message:
        line += f": {message[:300]}"
    return GeminiError(
        line,
        error_class=ErrorClass(
            kind="other", retryable=True, fallback=True, reason="malformed function call"
        ),
        route=route,
        partial=partial,
    )


def auth_failed(route: Route, what: str) -> GeminiError:
    return GeminiError(
        f"could not get a Google Cloud access token for {route.provider}: {what}",
        error_class=ErrorClass(kind="auth", fallback=True, reason="token refresh failed"),
        route=route,
    )
