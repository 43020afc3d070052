"""Bedrock's error answers: the name in ``x-amzn-errortype``, the words in
``{"message": ...}``, each to its class (bodies as AWS documents them; the header's
value as Bedrock sends it, ``Name:http://internal.amazon.com/coral/...``)."""

from __future__ import annotations

import json

import pytest
from modelplug import ModelError

CORAL = ":http://internal.amazon.com/coral/com.amazon.bedrock/"


def failure(client, wire_server, status, name, message, headers=None):
    wire_server.add(
        json.dumps({"message": message}).encode(),
        status=status,
        path="/model/m/converse-stream",
        content_type="application/json",
        headers={"x-amzn-errortype": name + CORAL, "x-amzn-requestid": "req-1", **(headers or {})},
    )
    with pytest.raises(ModelError) as caught:
        client().complete("bedrock/m", "hi")
    return caught.value


def test_access_denied_is_an_auth_error_naming_the_credentials(client, wire_server):
    error = failure(
        client,
        wire_server,
        403,
        "AccessDeniedException",
        "User: arn:aws:iam::1:user/x is not authorized to perform: bedrock:InvokeModelWithResponseStream",
    )
    assert (error.error_class.kind, error.error_class.retryable) == ("auth", False)
    assert "AccessDeniedException" in str(error)
    assert "bedrock:InvokeModelWithResponseStream" in str(error)
    assert error.error_type == "AccessDeniedException"


def test_a_model_without_access_is_not_found_and_says_where_to_enable_it(client, wire_server):
    error = failure(
        client,
        wire_server,
        404,
        "ResourceNotFoundException",
        "Model use case details have not been submitted for this account.",
    )
    assert error.error_class.kind == "not_found"
    assert error.error_class.fallback is True
    assert "Model access" in str(error) and "us-east-1" in str(error)


def test_a_model_that_needs_an_inference_profile_says_which_spec_to_use(client, wire_server):
    error = failure(
        client,
        wire_server,
        400,
        "ValidationException",
        "Invocation of model ID anthropic.claude-sonnet-4-6 with on-demand throughput isn't "
        "supported. Retry your request with the ID or ARN of an inference profile that "
        "contains this model.",
    )
    assert error.error_class.kind == "not_found"
    assert "bedrock/us.m" in str(error)


def test_an_input_too_long_is_a_context_overflow_and_never_falls_back(client, wire_server):
    error = failure(
        client, wire_server, 400, "ValidationException", "Input is too long for requested model."
    )
    assert error.error_class.kind == "context_overflow"
    assert error.error_class.fallback is False


def test_another_validation_error_is_a_bad_request(client, wire_server):
    error = failure(
        client,
        wire_server,
        400,
        "ValidationException",
        "1 validation error detected: Value at 'inferenceConfig.maxTokens' failed",
    )
    assert (error.error_class.kind, error.error_class.retryable) == ("bad_request", False)


def test_throttling_is_a_rate_limit_with_retry_advice(client, wire_server):
    error = failure(
        client,
        wire_server,
        429,
        "ThrottlingException",
        "Too many requests, please wait.",
        headers={"Retry-After": "3"},
    )
    assert error.error_class.kind == "rate_limit"
    assert error.error_class.retryable and error.error_class.fallback
    assert error.error_class.retry_after == 3
    assert "retry after 3 s" in str(error)


@pytest.mark.parametrize(
    ("status", "name"), [(503, "ServiceUnavailableException"), (429, "ModelNotReadyException")]
)
def test_an_unavailable_or_unready_model_is_overloaded_and_retryable(
    client, wire_server, status, name
):
    error = failure(client, wire_server, status, name, "Bedrock is unable to process your request.")
    assert error.error_class.kind == "overloaded"
    assert error.error_class.retryable is True
    assert error.error_class.status == status


def test_without_the_header_the_status_decides(client, wire_server):
    wire_server.add(
        b'{"message":"boom"}',
        status=500,
        path="/model/m/converse-stream",
        content_type="application/json",
    )
    with pytest.raises(ModelError) as caught:
        client().complete("bedrock/m", "hi")
    assert caught.value.error_class.kind == "transient"
    assert "boom" in str(caught.value)
