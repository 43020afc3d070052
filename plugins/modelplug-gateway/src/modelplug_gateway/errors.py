"""One place that maps modelplug's ErrorClass to an HTTP status, for every shape.

The status is what the OpenAI and Anthropic SDKs turn into their own exception classes
(429 -> RateLimitError, 504 -> a timeout...), so a caller's retry logic works unchanged
through the gateway."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from modelplug.plugin import ErrorClass

__all__ = ["STATUS_BY_KIND", "kind_for_status", "status_for"]

STATUS_BY_KIND: dict[str, int] = {
    "bad_request": 400,
    "context_overflow": 400,
    "content_filter": 400,
    "auth": 401,
    "quota": 429,
    "not_found": 404,
    "rate_limit": 429,
    "overloaded": 503,
    "unreachable": 502,
    "transient": 502,
    "aborted": 499,
    "other": 500,
}

# The error "type" each status has in OpenAI's and Anthropic's bodies.
_TYPE_BY_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "overloaded_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def status_for(error_class: ErrorClass) -> int:
    """The status a caller gets for a failed call: the upstream's own 403 or 529 stays
    (it says more than the kind), a stall or a timeout is 504, the rest by kind."""
    upstream = error_class.status
    if upstream in (403, 413, 529):
        return upstream
    reason = error_class.reason.lower()
    if error_class.kind == "transient" and ("timed out" in reason or "timeout" in reason):
        return 504
    if upstream == 504 or upstream == 408:
        return 504
    return STATUS_BY_KIND.get(error_class.kind, 500)


def kind_for_status(status: int) -> str:
    return _TYPE_BY_STATUS.get(status, "api_error" if status >= 500 else "invalid_request_error")
