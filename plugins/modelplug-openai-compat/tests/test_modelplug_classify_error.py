"""modelplug_classify_error answers for this plugin's errors, and only for them."""

from __future__ import annotations

import modelplug_openai_compat as plugin
from modelplug.plugin import ErrorClass
from modelplug.types import Endpoint, Route
from modelplug_openai_compat.errors import OpenAICompatError, http_error

ROUTE = Route(
    provider="lab",
    model="m",
    endpoint=Endpoint(type="openai-compatible", base_url="https://x.test/v1"),
)


def test_modelplug_classify_error_returns_the_error_class():
    error = http_error(429, {"retry-after-ms": "1500"}, b'{"error": {"message": "slow"}}', ROUTE)
    result = plugin.modelplug_classify_error(error=error, route=ROUTE)
    assert result == error.error_class
    assert result is not None and result.kind == "rate_limit" and result.retry_after == 1.5


def test_modelplug_classify_error_leaves_other_errors_alone():
    assert plugin.modelplug_classify_error(error=ValueError("x"), route=None) is None


def test_client_classify_uses_it(make_client):
    client = make_client("modelplug-openai-compat", entry_points=True)
    error = OpenAICompatError("boom", error_class=ErrorClass(kind="overloaded", retryable=True))
    assert client.classify(error).kind == "overloaded"


def test_http_error_for_a_plain_text_body():
    error = http_error(502, {}, b"<html>Bad Gateway</html>", ROUTE)
    assert error.kind == "transient" and error.retryable
    assert "lab answered 502" in str(error) and "Bad Gateway" in str(error)
