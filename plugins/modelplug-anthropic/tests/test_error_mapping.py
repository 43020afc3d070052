"""An error answer of the Messages API, from the loopback server, becomes the plugin's
StatusError with its ErrorClass (the class core's ``Client.classify`` reads first):
statuses, Anthropic's error types, Retry-After and request-id, and a key echoed back
never shown."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from modelplug import Client, ModelError
from modelplug_anthropic.errors import StatusError
from modelplug_kit.testing import WireServer

MakeClient = Callable[..., Client]
SPEC = "anthropic/claude-sonnet-4-6"


def error_body(etype: str, message: str) -> dict[str, Any]:
    """An error response as the Messages API errors page shows it."""
    return {"type": "error", "error": {"type": etype, "message": message}}


def failure(client: Client) -> ModelError:
    with pytest.raises(ModelError) as caught:
        client.complete(SPEC, "hi")
    return caught.value


def test_a_429_is_a_rate_limit_with_retry_after_and_the_request_id(
    claude_client: MakeClient, wire_server: WireServer
) -> None:
    wire_server.add_json(
        error_body("rate_limit_error", "Number of requests has exceeded your rate limit"),
        status=429,
        headers={"retry-after": "7", "request-id": "req_011CSHoEeqs5C35K2UUqR7Fy"},
    )
    error = failure(claude_client())
    assert error.kind == "rate_limit"
    assert error.error_class.retry_after == 7
    assert error.retryable and error.error_class.fallback
    assert isinstance(error, StatusError) and error.status_code == 429
    # What Anthropic's support asks for, and the server's own words.
    assert error.request_id == "req_011CSHoEeqs5C35K2UUqR7Fy"
    assert "req_011CSHoEeqs5C35K2UUqR7Fy" in str(error)
    assert "Number of requests has exceeded your rate limit" in str(error)
    assert len(wire_server.requests) == 1  # nothing retried on its own


def test_a_529_is_overloaded(claude_client: MakeClient, wire_server: WireServer) -> None:
    wire_server.add_json(error_body("overloaded_error", "Overloaded"), status=529)
    error = failure(claude_client())
    assert error.kind == "overloaded"
    assert error.retryable and error.error_class.fallback
    assert error.error_class.status == 529
    assert len(wire_server.requests) == 1


def test_prompt_too_long_is_context_overflow(
    claude_client: MakeClient, wire_server: WireServer
) -> None:
    wire_server.add_json(
        error_body("invalid_request_error", "prompt is too long: 215000 tokens > 200000 maximum"),
        status=400,
    )
    error = failure(claude_client())
    assert error.kind == "context_overflow"
    assert not error.retryable and not error.error_class.fallback


@pytest.mark.parametrize(
    ("status", "etype", "kind", "retryable", "fallback"),
    [
        (400, "invalid_request_error", "bad_request", False, False),
        (401, "authentication_error", "auth", False, True),
        (403, "permission_error", "auth", False, True),
        (404, "not_found_error", "not_found", False, True),
        (500, "api_error", "transient", True, True),
        (502, "api_error", "transient", True, True),
        (503, "api_error", "transient", True, True),
        (504, "api_error", "transient", True, True),
    ],
)
def test_each_status_has_its_class(
    claude_client: MakeClient,
    wire_server: WireServer,
    status: int,
    etype: str,
    kind: str,
    retryable: bool,
    fallback: bool,
) -> None:
    wire_server.add_json(error_body(etype, "something went wrong"), status=status)
    error = failure(claude_client())
    assert (error.kind, error.retryable, error.error_class.fallback) == (kind, retryable, fallback)
    assert error.error_class.status == status
    if status == 403:
        assert "permission" in error.error_class.reason


def test_an_error_never_shows_the_key(
    claude_client: MakeClient, wire_server: WireServer, planted_key: str
) -> None:
    wire_server.add_json(error_body("authentication_error", "invalid x-api-key"), status=401)
    client = claude_client(key_env="PLANTED_API_KEY")
    error = failure(client)
    planted = client.settings.getenv("PLANTED_API_KEY")
    headers = wire_server.requests[0].headers
    assert planted and planted in headers.get("x-api-key", "") + headers.get("authorization", "")
    assert planted not in str(error) and planted not in repr(error)
    assert planted not in repr(error.route)
