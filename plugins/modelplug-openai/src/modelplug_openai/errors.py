"""This plugin's errors, each born with its ErrorClass.

They derive from :class:`modelplug.ModelError`, so the client passes them on
unchanged (message, class, partial output), and ``Client.classify`` reads their class
first (no classify hook is needed). The kit's HTTP path makes them through
:data:`ERRORS` (a status answer, a page, a cut, a stall); what is the Responses API's
own stays here: its error codes, OpenAI's ``x-ratelimit-reset-*`` durations, and the
error events of a stream. The plugin never retries: retries belong to the fallback
policy, which reads ``retryable`` and ``retry_after``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Any

from modelplug import (
    ErrorClass,
    ModelError,
    Response,
    Route,
    class_for_status,
    redact,
    redact_data,
    retry_after_from_headers,
)
from modelplug_kit import WireErrors, error_body

from .options import SECTION

__all__ = [
    "EMBED_ERRORS",
    "ERRORS",
    "EmbedErrors",
    "OpenAIErrors",
    "ResponsesError",
    "classify",
    "failure",
    "rate_limit_reset",
]

CONTEXT_CODES = ("context_length_exceeded", "string_above_max_length")
CONTEXT_HINT = (
    "the prompt does not fit the model's context window; shorten or compact the "
    'conversation. Set context_window under [models."{name}"] to the window, and modelplug '
    "refuses a prompt surely too long for it before sending it"
)
# OpenAI's reset durations: "1s", "6m0s", "20ms", "1h2m3.5s".
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


class ResponsesError(ModelError):
    """Any failure of a Responses API call."""

    def __init__(
        self,
        message: str,
        *,
        error_class: ErrorClass,
        route: Route | None,
        partial: Response | None = None,
        status: int | None = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.status_code = status
        self.code = code
        # Kept redacted: a server may echo the key it refused in a header.
        self.headers = redact_data({str(k): str(v) for k, v in (headers or {}).items()})
        super().__init__(message, error_class=error_class, route=route, partial=partial)


def _duration(text: str) -> float | None:
    parts = _DURATION.findall(text.strip())
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        return None
    return sum(float(number) * _UNIT[unit] for number, unit in parts)


def rate_limit_reset(headers: Mapping[str, str]) -> float | None:
    """Seconds until the exhausted limit resets: ``x-ratelimit-reset-requests`` or
    ``-tokens`` (the one whose ``remaining`` is 0, else the later of the two)."""
    lower = {k.lower(): v for k, v in headers.items()}
    waits: dict[str, float] = {}
    for kind in ("requests", "tokens"):
        value = lower.get(f"x-ratelimit-reset-{kind}")
        seconds = _duration(value) if isinstance(value, str) else None
        if seconds is not None:
            waits[kind] = seconds
    for kind, seconds in waits.items():
        if str(lower.get(f"x-ratelimit-remaining-{kind}", "")).strip() == "0":
            return seconds
    return max(waits.values()) if waits else None


def classify(
    status: int | None, code: str | None, message: str, retry_after: float | None
) -> ErrorClass:
    """The ErrorClass of a status answer, an ``error`` event or a failed response: core's
    table, then the Responses API's own codes. A failure with nothing conclusive in
    the middle of a stream (``server_error``) is transient."""
    if code in CONTEXT_CODES:
        return ErrorClass(
            kind="context_overflow",
            status=status,
            reason="the prompt is longer than the model's context window",
        )
    found = class_for_status(status, error_type=code, text=message, retry_after=retry_after)
    if found is None and code in ("invalid_prompt", "invalid_request_error", "invalid_image"):
        found = ErrorClass(kind="bad_request", status=status, reason=f"refused: {code}")
    if found is None:
        reason = f"the server failed ({code})" if code else "the server failed mid-stream"
        return ErrorClass.transient(reason, status=status, retry_after=retry_after)
    if found.kind == "not_found":
        return dataclasses.replace(found, reason="model or endpoint not found")
    return found


def _error_fields(body: Any) -> tuple[str, str | None]:
    """The message and the code (or type) of an OpenAI error body or event."""
    nested = isinstance(body, Mapping) and isinstance(body.get("error"), Mapping)
    error = body["error"] if nested else body
    if isinstance(error, Mapping):
        message = error.get("message")
        # An error body's "type" is the error's kind; an error event's is "error".
        code = error.get("code") or (error.get("type") if nested else None)
        return (
            str(message) if message else json.dumps(error)[:500],
            code if isinstance(code, str) and code else None,
        )
    return (str(error or "").strip()[:500], None)


def _error(
    where: str,
    status: int | None,
    body: Any,
    route: Route,
    headers: Mapping[str, str] | None = None,
    partial: Response | None = None,
    overflow_hint: str | None = None,
) -> ResponsesError:
    message, code = _error_fields(body)
    message = redact(message)
    retry_after = None
    if headers is not None:
        retry_after = retry_after_from_headers(headers)
        if retry_after is None and status == 429:
            retry_after = rate_limit_reset(headers)
    error_class = classify(status, code, message, retry_after)
    overflow = error_class.kind == "context_overflow"
    hint = (overflow_hint or CONTEXT_HINT.format(name=route.name)) if overflow else ""
    text = WireErrors.wording(where, message, detail=code or "", hint=hint, retry_after=retry_after)
    return ResponsesError(
        text,
        error_class=error_class,
        route=route,
        partial=partial,
        status=status,
        code=code,
        headers=headers,
    )


def failure(event: Mapping[str, Any], route: Route, partial: Response | None) -> ResponsesError:
    """The error for an ``error`` event or a ``response.failed`` event."""
    if event.get("type") == "response.failed":
        response = event.get("response")
        body = response.get("error") if isinstance(response, Mapping) else None
        return _error(
            f"{route.provider} failed the response", None, body or {}, route, None, partial
        )
    return _error(f"{route.provider} reported an error", None, event, route, None, partial)


class OpenAIErrors(WireErrors):
    """The kit's HTTP path makes this plugin's errors: every one a
    :class:`ResponsesError`, a status answer read by the Responses API's codes and
    OpenAI's rate-limit headers."""

    error = ResponsesError
    #: what a context overflow's message advises (None: chat's context_window hint).
    overflow_hint: str | None = None

    def status(
        self, status: int, headers: Mapping[str, str], body: bytes, route: Route
    ) -> ResponsesError:
        data = error_body(body)  # redacted: a server may echo the key it refused
        if status < 300:
            # A JSON error answered with 200 carries no status worth the name: it is
            # read as the same error streamed would be, by its code.
            return _error(
                f"{route.provider} answered with an error",
                None,
                data,
                route,
                headers,
                overflow_hint=self.overflow_hint,
            )
        return _error(
            f"{route.provider} answered {status}",
            status,
            data,
            route,
            headers,
            overflow_hint=self.overflow_hint,
        )


class EmbedErrors(OpenAIErrors):
    """An embedding call's errors: an input too long is not a conversation to compact."""

    overflow_hint = "shorten or split that input: an embedding input holds 8,192 tokens"


ERRORS = OpenAIErrors(SECTION)
EMBED_ERRORS = EmbedErrors(SECTION)
