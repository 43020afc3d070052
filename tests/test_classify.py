"""Core's generic classifier reads plain properties; no SDK is needed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from modelplug.builtin.classify import classify, parse_retry_after, retry_after_from_headers
from modelplug.contract.errors import ErrorClass


class HTTPishError(Exception):
    def __init__(
        self,
        message: str = "",
        status_code: int | None = None,
        headers: Any = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.headers = headers or {}
        self.body = body


@pytest.mark.parametrize(
    ("error", "kind", "retryable", "fallback"),
    [
        (HTTPishError(status_code=429), "rate_limit", True, True),
        (HTTPishError(status_code=529), "overloaded", True, True),
        (
            HTTPishError(status_code=200, body={"error": {"type": "overloaded_error"}}),
            "overloaded",
            True,
            True,
        ),
        (HTTPishError(status_code=503), "transient", True, True),
        (HTTPishError(status_code=408), "transient", True, True),
        (HTTPishError(status_code=401), "auth", False, True),
        (HTTPishError(status_code=403), "auth", False, True),
        (HTTPishError(status_code=402), "quota", False, True),
        (HTTPishError(status_code=404), "not_found", False, True),
        (
            HTTPishError("prompt is too long: 210000 tokens > 200000 maximum", status_code=400),
            "context_overflow",
            False,
            False,
        ),
        (
            HTTPishError("the request exceeds the available context size", status_code=400),
            "context_overflow",
            False,
            False,
        ),
        (HTTPishError("bad field", status_code=400), "bad_request", False, False),
        # The server cannot do it at all: asking again, or elsewhere on it, is no help.
        (HTTPishError("does not support embeddings", status_code=501), "bad_request", False, False),
        (
            HTTPishError(status_code=200, body={"error": {"type": "not_supported_error"}}),
            "bad_request",
            False,
            False,
        ),
        (HTTPishError("model does not support tools"), "bad_request", False, False),
        (HTTPishError("not supported right now", status_code=503), "transient", True, True),
        (ConnectionResetError(104, "Connection reset by peer"), "transient", True, True),
        (TimeoutError("read timed out"), "transient", True, True),
        (ConnectionRefusedError(111, "Connection refused"), "unreachable", False, True),
        (asyncio.CancelledError(), "aborted", False, False),
        (ValueError("something else"), "other", False, False),
    ],
)
def test_generic_classes(error: BaseException, kind: str, retryable: bool, fallback: bool) -> None:
    result = classify(error)
    assert (result.kind, result.retryable, result.fallback) == (kind, retryable, fallback)


def test_cause_chain_is_read() -> None:
    try:
        try:
            raise ConnectionResetError("reset")
        except ConnectionResetError as inner:
            raise RuntimeError("stream failed") from inner
    except RuntimeError as outer:
        assert classify(outer).kind == "transient"


def test_retry_after_seconds_ms_and_http_date() -> None:
    assert classify(HTTPishError(status_code=429, headers={"retry-after": "7"})).retry_after == 7.0
    assert (
        classify(HTTPishError(status_code=429, headers={"retry-after-ms": "1500"})).retry_after
        == 1.5
    )
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("soon") is None


def test_retry_after_from_headers_in_any_case() -> None:
    assert retry_after_from_headers({"Retry-After": "7"}) == 7.0
    assert retry_after_from_headers({"Retry-After-Ms": "1500", "Retry-After": "7"}) == 1.5
    # An unreadable retry-after-ms leaves Retry-After to answer.
    assert retry_after_from_headers({"retry-after-ms": "soon", "retry-after": "3"}) == 3.0
    assert retry_after_from_headers({}) is None
    assert retry_after_from_headers(None) is None
    assert classify(HTTPishError(status_code=429, headers={"Retry-After": "2"})).retry_after == 2.0


def test_error_class_rules_cannot_be_broken() -> None:
    with pytest.raises(ValueError, match="never falls back"):
        ErrorClass(kind="context_overflow", fallback=True)
    with pytest.raises(ValueError, match="never retried"):
        ErrorClass(kind="aborted", retryable=True)
