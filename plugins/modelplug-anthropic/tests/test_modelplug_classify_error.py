"""modelplug_classify_error: what is not a ModelError (core reads a ModelError's own
class first; the Messages API's error answers are in test_error_mapping.py): real
anthropic SDK errors (the Batch API's), batch results, transport errors on this
plugin's routes, an abort."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import modelplug_anthropic
import pytest
from modelplug import Client
from modelplug.contract.types import Endpoint, Route
from modelplug_anthropic.errors import BatchResultError

MakeClient = Callable[..., Client]
ROUTE = Route(provider="anthropic", model="m", endpoint=Endpoint(type="anthropic"))
OTHER = Route(provider="ollama", model="m", endpoint=Endpoint(type="openai-compatible"))


def error_body(etype: str, message: str) -> dict[str, Any]:
    """An error response as the Messages API errors page shows it."""
    return {"type": "error", "error": {"type": etype, "message": message}}


def test_modelplug_classify_error_in_stream_overloaded_has_status_200() -> None:
    anthropic = pytest.importorskip("anthropic")
    httpx2 = pytest.importorskip("httpx2")
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    response = httpx2.Response(200, request=request)
    body = error_body("overloaded_error", "Overloaded")
    error = anthropic.APIStatusError(str(body), response=response, body=body)
    result = modelplug_anthropic.modelplug_classify_error(error=error, route=ROUTE)
    assert result is not None
    assert (result.kind, result.retryable, result.fallback) == ("overloaded", True, True)
    assert result.status is None
    body = error_body("api_error", "Internal server error")
    api_error = anthropic.APIStatusError(str(body), response=response, body=body)
    result = modelplug_anthropic.modelplug_classify_error(error=api_error, route=ROUTE)
    assert result is not None and result.kind == "transient" and result.retryable


def test_modelplug_classify_error_connection_errors_and_timeouts_are_transient() -> None:
    anthropic = pytest.importorskip("anthropic")
    httpx2 = pytest.importorskip("httpx2")
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    for error, reason in (
        (anthropic.APIConnectionError(request=request), "connection lost"),
        (anthropic.APITimeoutError(request=request), "timed out"),
        (httpx2.ReadTimeout("idle", request=request), "timed out"),
    ):
        result = modelplug_anthropic.modelplug_classify_error(error=error, route=ROUTE)
        assert result is not None
        assert (result.kind, result.retryable, result.reason) == ("transient", True, reason)
    # A transport error on another plugin's route is that plugin's to classify.
    other = httpx2.ConnectError("refused", request=request)
    assert modelplug_anthropic.modelplug_classify_error(error=other, route=OTHER) is None


def test_modelplug_classify_error_abort_is_never_retried() -> None:
    result = modelplug_anthropic.modelplug_classify_error(
        error=asyncio.CancelledError(), route=ROUTE
    )
    assert result is not None
    assert (result.kind, result.retryable, result.fallback) == ("aborted", False, False)


@pytest.mark.parametrize(
    ("error", "kind", "retryable"),
    [
        (BatchResultError("x", result="errored", type="overloaded_error"), "overloaded", True),
        (BatchResultError("x", result="errored", type="api_error"), "transient", True),
        (
            BatchResultError("x", result="errored", type="invalid_request_error"),
            "bad_request",
            False,
        ),
        (
            BatchResultError("prompt is too long", result="errored", type="invalid_request_error"),
            "context_overflow",
            False,
        ),
        (BatchResultError("x", result="errored", type="rate_limit_error"), "rate_limit", True),
        (BatchResultError("x", result="errored", type="authentication_error"), "auth", False),
        (BatchResultError("x", result="errored", type="billing_error"), "quota", False),
        (BatchResultError("x", result="expired"), "other", False),
        (BatchResultError("x", result="canceled"), "aborted", False),
    ],
)
def test_modelplug_classify_error_batch_results(
    error: BatchResultError, kind: str, retryable: bool
) -> None:
    result = modelplug_anthropic.modelplug_classify_error(error=error, route=ROUTE)
    assert result is not None
    assert (result.kind, result.retryable) == (kind, retryable)


def test_modelplug_classify_error_leaves_other_errors_alone() -> None:
    assert modelplug_anthropic.modelplug_classify_error(error=ValueError("x"), route=ROUTE) is None


def test_modelplug_classify_error_is_used_by_the_client(make_client: MakeClient) -> None:
    client = make_client(modelplug_anthropic)
    error = BatchResultError("x", result="errored", type="overloaded_error")
    assert client.classify(error, ROUTE).kind == "overloaded"


@pytest.mark.parametrize(
    ("status", "etype", "kind", "reason"),
    [
        (529, "overloaded_error", "overloaded", "Anthropic is overloaded"),
        (200, "overloaded_error", "overloaded", "Anthropic is overloaded"),
        (503, "api_error", "transient", "Anthropic server error 503"),
        (200, "api_error", "transient", "Anthropic server error"),
        (408, "timeout_error", "transient", "request timeout"),
        (409, "conflict_error", "transient", "conflict"),
        (401, "authentication_error", "auth", "authentication failed; check the key"),
        (200, "authentication_error", "auth", "authentication failed"),
        (403, "permission_error", "auth", "permission denied"),
        (402, "billing_error", "quota", "billing problem"),
        (429, "rate_limit_error", "rate_limit", "rate limited"),
        (404, "not_found_error", "not_found", "model not found"),
        (400, "invalid_request_error", "bad_request", "bad request (400)"),
        (200, "unheard_of_error", "bad_request", "bad request"),
    ],
)
def test_modelplug_classify_error_says_why_in_anthropic_words(
    status: int, etype: str, kind: str, reason: str
) -> None:
    anthropic = pytest.importorskip("anthropic")
    httpx2 = pytest.importorskip("httpx2")
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    body = error_body(etype, "something went wrong")
    error = anthropic.APIStatusError(
        str(body), response=httpx2.Response(status, request=request), body=body
    )
    result = modelplug_anthropic.modelplug_classify_error(error=error, route=ROUTE)
    assert result is not None
    assert (result.kind, result.reason) == (kind, reason)
    assert result.status == (None if status == 200 else status)


def test_modelplug_classify_error_a_timeout_over_a_cancelled_wait_is_still_a_timeout() -> None:
    httpx2 = pytest.importorskip("httpx2")
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    timeout = httpx2.ReadTimeout("idle", request=request)
    timeout.__context__ = asyncio.CancelledError()  # how a cancel scope's timeout is raised
    refused = httpx2.ConnectError("refused", request=request)
    for error, reason in ((timeout, "timed out"), (refused, "connection lost")):
        result = modelplug_anthropic.modelplug_classify_error(error=error, route=ROUTE)
        assert result is not None
        assert (result.kind, result.retryable, result.reason) == ("transient", True, reason)


@pytest.mark.parametrize(
    ("result", "kind", "fallback", "reason"),
    [
        ("expired", "other", True, "the batch request expired"),
        ("canceled", "aborted", False, "the batch was canceled"),
        ("vanished", "other", False, "the batch request ended as vanished"),
    ],
)
def test_modelplug_classify_error_batch_endings_say_why(
    result: str, kind: str, fallback: bool, reason: str
) -> None:
    error = BatchResultError("x", result=result)
    found = modelplug_anthropic.modelplug_classify_error(error=error, route=ROUTE)
    assert found is not None
    assert (found.kind, found.fallback, found.reason) == (kind, fallback, reason)
