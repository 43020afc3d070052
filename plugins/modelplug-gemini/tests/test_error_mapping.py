"""Errors: Google's status bodies on a real socket become classified ModelErrors (the
class core's ``Client.classify`` reads first)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from modelplug import ModelError
from modelplug.client.client import Client
from modelplug_kit.testing import WireServer


def failure(
    client: Client, server: WireServer, status: int, body: Any, **kwargs: Any
) -> ModelError:
    server.add(json.dumps(body), status=status, content_type="application/json", **kwargs)
    with pytest.raises(ModelError) as caught:
        client.complete("gemini/gemini-2.5-flash", "hi")
    return caught.value


def google_error(code: int, status: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status, **extra}}


def test_rate_limit_reads_retry_delay(
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
    recorded_json: Callable[[str], Any],
) -> None:
    error = failure(gemini_client(), wire_server, 429, recorded_json("rate_limit_429.json"))
    assert error.kind == "rate_limit"
    assert error.error_class.retry_after == 26.0
    assert error.retryable and error.error_class.fallback
    assert "RESOURCE_EXHAUSTED" in str(error) and "retry after 26 s" in str(error)


def test_daily_quota_is_quota_not_a_rate_limit(
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
    recorded_json: Callable[[str], Any],
) -> None:
    error = failure(gemini_client(), wire_server, 429, recorded_json("daily_quota_429.json"))
    assert error.kind == "quota"
    assert not error.retryable and error.error_class.fallback


def test_rate_limit_without_retry_info_uses_retry_after_header(
    gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    body = google_error(
        429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."
    )
    error = failure(gemini_client(), wire_server, 429, body, headers={"Retry-After": "7"})
    assert (error.kind, error.error_class.retry_after) == ("rate_limit", 7.0)


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (
            503,
            google_error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
            "overloaded",
        ),
        (500, google_error(500, "INTERNAL", "An internal error has occurred."), "transient"),
        (504, google_error(504, "DEADLINE_EXCEEDED", "Deadline exceeded"), "transient"),
        (
            400,
            google_error(
                400,
                "INVALID_ARGUMENT",
                "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
            ),
            "context_overflow",
        ),
        (
            400,
            google_error(400, "INVALID_ARGUMENT", "Invalid value at 'contents[0].role'"),
            "bad_request",
        ),
        (
            400,
            google_error(
                400,
                "INVALID_ARGUMENT",
                "API key not valid. Please pass a valid API key.",
                details=[
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "API_KEY_INVALID",
                        "domain": "googleapis.com",
                    }
                ],
            ),
            "auth",
        ),
        (
            401,
            google_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."),
            "auth",
        ),
        (
            403,
            google_error(403, "PERMISSION_DENIED", "Permission denied on resource project."),
            "auth",
        ),
        (
            404,
            google_error(404, "NOT_FOUND", "models/gemini-9 is not found for API version v1beta"),
            "not_found",
        ),
    ],
)
def test_google_statuses_are_classified(
    gemini_client: Callable[..., Client], wire_server: WireServer, status: int, body: Any, kind: str
) -> None:
    error = failure(gemini_client(), wire_server, status, body)
    assert error.kind == kind
    assert error.error_class.status == status


def test_a_key_echoed_in_an_error_is_masked(
    gemini_client: Callable[..., Client], wire_server: WireServer, test_key: str
) -> None:
    body = google_error(400, "INVALID_ARGUMENT", f"API key not valid: {test_key}")
    error = failure(gemini_client(), wire_server, 400, body)
    assert test_key not in str(error) and test_key not in repr(error.__dict__)


def test_an_error_event_mid_stream_keeps_the_partial_output(
    gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    wire_server.add_sse(
        [
            {"candidates": [{"content": {"parts": [{"text": "Partial answer"}], "role": "model"}}]},
            google_error(500, "INTERNAL", "An internal error has occurred."),
        ]
    )
    with pytest.raises(ModelError) as caught:
        gemini_client().complete("gemini/gemini-2.5-flash", "hi")
    assert caught.value.kind == "transient"
    assert caught.value.partial is not None and caught.value.partial.text == "Partial answer"


def test_client_classify_reads_the_errors_own_class(
    gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    client = gemini_client()
    error = failure(client, wire_server, 503, google_error(503, "UNAVAILABLE", "overloaded"))
    assert error.kind == "overloaded"
    assert client.classify(error, client.resolve("gemini/gemini-2.5-flash")) is error.error_class
