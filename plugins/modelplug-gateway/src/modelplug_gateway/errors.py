"""The one place that decides what a caller gets when a call fails, in each shape.

For every ErrorClass kind, and for the errors raised before any upstream answered (a
provider key missing on the gateway, a model no plugin serves, a structured answer that
does not fit its schema), :func:`failure_for` gives the HTTP status, the error body's
``type`` (and OpenAI's string ``code``), ``Retry-After`` and whether the SDKs should send
the call again. The status is what the OpenAI and Anthropic SDKs turn into their own
exception classes (429 -> RateLimitError, 402 -> PaymentRequiredError, 504 -> a
timeout...), so a caller's retry logic works unchanged through the gateway.

The SDKs retry 408, 409, 429 and every 5xx by themselves (twice, by default). Where the
ErrorClass says the same call cannot succeed later and the server gave no time to wait,
the answer carries ``x-should-retry: false``, which both SDKs obey: a key missing on the
gateway is not asked about three times.

A structured answer cut at max_tokens inside its JSON is not an error a shape has to
invent: :func:`cut_answer` makes it the answer it is (``finish_reason: "length"``,
``stop_reason: "max_tokens"``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from modelplug import (
    ConfigError,
    MissingKeyError,
    ModelError,
    ModelplugError,
    NoProviderError,
    OutputTruncatedError,
    OutputValidationError,
    PluginLoadError,
    RequestError,
    UnknownProviderError,
    redact,
)

if TYPE_CHECKING:
    from modelplug import ErrorClass, Response

__all__ = [
    "ANTHROPIC_TYPES",
    "BY_KIND",
    "OPENAI_TYPES",
    "Failure",
    "class_failure",
    "cut_answer",
    "failure_for",
    "kind_for_status",
    "openai_code",
    "status_for",
]

# The error "type" each status has in the bodies of each shape, for answers that name
# no type of their own (the gateway's own refusals say theirs).
OPENAI_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "insufficient_quota",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    499: "api_error",
    500: "api_error",
    502: "api_error",
    503: "overloaded_error",
    504: "timeout_error",
    529: "overloaded_error",
}
# The types Anthropic's API documents for its statuses.
ANTHROPIC_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    499: "api_error",
    500: "api_error",
    502: "api_error",
    503: "overloaded_error",
    504: "timeout_error",
    529: "overloaded_error",
}
# OpenAI's clients read ``code`` as a string naming the cause; these are OpenAI's own
# where it has one for the case.
_OPENAI_CODES: dict[str, str] = {
    "authentication_error": "invalid_api_key",
    "rate_limit_error": "rate_limit_exceeded",
    "insufficient_quota": "insufficient_quota",
    "timeout_error": "timeout",
}


class Row(NamedTuple):
    """What one ErrorClass kind becomes: OpenAI's status, type and code; Anthropic's
    status and type."""

    openai_status: int
    openai_type: str
    openai_code: str
    anthropic_status: int
    anthropic_type: str


# What each ErrorClass kind becomes in each shape: (status, type, OpenAI's code) for the
# OpenAI shape (chat completions and embeddings), (status, type) for Anthropic's.
# fmt: off
_OPENAI: dict[str, tuple[int, str, str]] = {
    "bad_request":      (400, "invalid_request_error", "invalid_request_error"),
    "context_overflow": (400, "invalid_request_error", "context_length_exceeded"),
    "content_filter":   (400, "invalid_request_error", "content_filter"),
    "auth":             (401, "authentication_error", "invalid_api_key"),
    # OpenAI's own answer for an exhausted quota: a 429 that no wait fixes.
    "quota":            (429, "insufficient_quota", "insufficient_quota"),
    "not_found":        (404, "not_found_error", "model_not_found"),
    "rate_limit":       (429, "rate_limit_error", "rate_limit_exceeded"),
    "overloaded":       (503, "overloaded_error", "overloaded"),
    "unreachable":      (502, "api_error", "upstream_unreachable"),
    "transient":        (502, "api_error", "upstream_error"),
    # The call was cancelled (nginx's "client closed request"; the SDKs know 499).
    "aborted":          (499, "api_error", "aborted"),
    "other":            (500, "api_error", "server_error"),
}
_ANTHROPIC: dict[str, tuple[int, str]] = {
    "bad_request":      (400, "invalid_request_error"),
    "context_overflow": (400, "invalid_request_error"),
    "content_filter":   (400, "invalid_request_error"),
    "auth":             (401, "authentication_error"),
    "quota":            (402, "billing_error"),  # the API's own: billing, not a rate
    "not_found":        (404, "not_found_error"),
    "rate_limit":       (429, "rate_limit_error"),
    "overloaded":       (503, "overloaded_error"),
    "unreachable":      (502, "api_error"),
    "transient":        (502, "api_error"),
    "aborted":          (499, "api_error"),
    "other":            (500, "api_error"),
}
# fmt: on
BY_KIND: dict[str, Row] = {kind: Row(*row, *_ANTHROPIC[kind]) for kind, row in _OPENAI.items()}
# Statuses an upstream answered that say more than the kind, kept as they are.
_KEPT = {
    403: ("permission_error", "permission_denied"),
    413: ("request_too_large", "request_too_large"),
    529: ("overloaded_error", "overloaded"),
}
# The statuses both SDKs send again by themselves.
_SDK_RETRIES = frozenset({408, 409, 429})


@dataclass(frozen=True, slots=True)
class Failure:
    """What a caller of one shape gets for a failed call."""

    status: int
    type: str
    """The error body's ``type`` in the caller's shape."""
    code: str
    """OpenAI's string ``code`` (the Anthropic shape has none)."""
    message: str
    """Redacted; never a key."""
    kind: str
    """The label of ``modelplug_gateway_errors_total``: an ErrorClass kind, or
    ``config`` (the gateway's own set-up: for its operator's log too) or
    ``output_invalid``; a fixed set."""
    retry_after: float | None = None
    retry: bool | None = None
    """``x-should-retry`` for the SDKs; None: their own rule by status."""

    def headers(self) -> list[tuple[bytes, bytes]]:
        """``x-should-retry`` when the SDKs' own rule would be wrong (``Retry-After`` is
        added where every error answer gets it)."""
        if self.retry is None:
            return []
        return [(b"x-should-retry", b"true" if self.retry else b"false")]


def _sdk_retries(status: int) -> bool:
    return status in _SDK_RETRIES or status >= 500


def class_failure(error_class: ErrorClass, shape: str, message: str) -> Failure:
    """The answer in ``shape`` (``"openai"`` or ``"anthropic"``) for a call that failed
    with ``error_class``."""
    row = BY_KIND.get(error_class.kind, BY_KIND["other"])
    if shape == "anthropic":
        status, kind, code = row.anthropic_status, row.anthropic_type, row.openai_code
    else:
        status, kind, code = row.openai_status, row.openai_type, row.openai_code
    upstream = error_class.status
    if upstream in _KEPT:
        status = upstream
        kind, code = _KEPT[upstream]
    elif _timed_out(error_class):
        status, kind, code = 504, "timeout_error", "timeout"
    retry = None
    # A server that named a wait says the call may succeed after it: left to the SDK.
    if not error_class.retryable and error_class.retry_after is None and _sdk_retries(status):
        retry = False
    return Failure(
        status=status,
        type=kind,
        code=code,
        message=message,
        kind=error_class.kind,
        retry_after=error_class.retry_after,
        retry=retry,
    )


def _timed_out(error_class: ErrorClass) -> bool:
    if error_class.status in (408, 504):
        return True
    reason = error_class.reason.lower()
    return error_class.kind == "transient" and ("timed out" in reason or "timeout" in reason)


def failure_for(error: BaseException, shape: str) -> Failure | None:
    """The answer in ``shape`` for an error a call raised; None for an exception that is
    not modelplug's (a bug: the app lets it propagate)."""
    if isinstance(error, ModelError):
        return class_failure(error.error_class, shape, redact(str(error)))
    if not isinstance(error, ModelplugError):
        return None
    types = ANTHROPIC_TYPES if shape == "anthropic" else OPENAI_TYPES
    message = redact(str(error))
    if isinstance(error, RequestError):
        return Failure(400, types[400], "invalid_request_error", message, "bad_request")
    if isinstance(error, UnknownProviderError):
        return Failure(404, types[404], "model_not_found", message, "not_found")
    if isinstance(error, OutputValidationError):
        # The model's answer, not the request, is at fault, and the gateway already
        # asked again as often as the request allowed: no SDK retry on top.
        return Failure(
            502, types[502], "output_validation_failed", message, "output_invalid", retry=False
        )
    # What remains is the gateway's own set-up (a key it lacks, its settings, a plugin
    # that failed): no caller can fix it and no retry will.
    setup = isinstance(error, _SETUP)
    return Failure(
        500,
        types[500],
        "gateway_misconfigured" if setup else "server_error",
        _for_the_operator(error, message),
        "config" if setup else "other",
        retry=False,
    )


# The errors of the gateway's own settings and installation.
_SETUP = (MissingKeyError, ConfigError, NoProviderError, PluginLoadError)


def _for_the_operator(error: ModelplugError, message: str) -> str:
    """The message of an error of the gateway's own, worded for whoever runs it (the
    app writes it to the gateway's log too, where the operator looks)."""
    if isinstance(error, MissingKeyError):
        return (
            f"the gateway cannot call the provider {error.provider}: its operator has not set "
            f"{error.variable} where the gateway runs (a setting of the gateway, not the "
            "caller's key)"
        )
    if isinstance(error, _SETUP):
        return f"the gateway's set-up is wrong (for its operator to fix): {message}"
    return message


def cut_answer(error: OutputTruncatedError) -> Response | None:
    """The answer a structured call cut at max_tokens inside its JSON really is: the
    text as far as it got, stopped for ``max_tokens`` (None when the error holds no
    response to build it from)."""
    from modelplug import OpaqueBlock, TextBlock, ThinkingBlock

    response = error.response
    if response is None:
        return None
    kept = [b for b in response.message.content if isinstance(b, ThinkingBlock | OpaqueBlock)]
    message = response.message.model_copy(update={"content": [*kept, TextBlock(text=error.raw)]})
    return response.model_copy(
        update={"message": message, "stop_reason": "max_tokens", "parsed": None}
    )


def openai_code(kind: str) -> str:
    """OpenAI's string ``code`` for an error ``type`` the gateway answers with."""
    return _OPENAI_CODES.get(kind, kind)


def status_for(error_class: ErrorClass) -> int:
    """The status a caller of the OpenAI shape gets for ``error_class``."""
    return class_failure(error_class, "openai", "").status


def kind_for_status(status: int) -> str:
    """The OpenAI shape's error ``type`` for a status."""
    return OPENAI_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
