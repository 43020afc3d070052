"""An error answer becomes this plugin's error with its ErrorClass (statuses, Retry-After,
a plain text body), the class ``Client.classify`` reads first."""

from __future__ import annotations

from modelplug import ErrorClass
from modelplug.contract.types import Endpoint, Route
from modelplug_openai_compat.errors import OpenAICompatError, http_error

ROUTE = Route(
    provider="lab",
    model="m",
    endpoint=Endpoint(type="openai-compatible", base_url="https://x.test/v1"),
)


def test_a_429_is_a_rate_limit_with_its_retry_after_ms():
    error = http_error(429, {"retry-after-ms": "1500"}, b'{"error": {"message": "slow"}}', ROUTE)
    assert error.kind == "rate_limit" and error.error_class.retry_after == 1.5
    assert "slow" in str(error)


def test_client_classify_reads_the_errors_own_class(make_client):
    client = make_client("modelplug-openai-compat", entry_points=True)
    error = OpenAICompatError("boom", error_class=ErrorClass(kind="overloaded", retryable=True))
    assert client.classify(error).kind == "overloaded"


def test_http_error_for_a_plain_text_body():
    error = http_error(502, {}, b"<html>Bad Gateway</html>", ROUTE)
    assert error.kind == "transient" and error.retryable
    assert "lab answered 502" in str(error) and "Bad Gateway" in str(error)
