"""Limits learned from the servers: the rate-limit headers a response carries
(OpenAI/LiteLLM ``x-ratelimit-*``, Anthropic ``anthropic-ratelimit-*``) and a 429's
Retry-After close the model's room until they say it reopens."""

from __future__ import annotations

from typing import Any

import pytest
from modelplug import ModelError
from modelplug.contract.types import Response
from modelplug.testing import FakeModel, text
from modelplug_limits.headers import parse_duration, room_from_headers

NOW = 1_764_590_400.0  # 2025-12-01T12:00:00Z, the fake clock's start


def with_headers(answer: str, headers: dict[str, str]) -> Response:
    response = text(answer)
    response.metadata["rate_limits"] = headers
    return response


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("2.5", 2.5)],
)
def test_durations_read_as_openai_writes_them(value: str, seconds: float) -> None:
    assert parse_duration(value) == pytest.approx(seconds)


def test_unreadable_headers_report_no_room() -> None:
    assert not room_from_headers({"x-ratelimit-remaining-requests": "many"})
    assert not room_from_headers(None)
    assert parse_duration("soon") is None


def test_openai_headers_give_requests_and_tokens_left() -> None:
    room = room_from_headers(
        {
            "x-ratelimit-limit-requests": "60",
            "x-ratelimit-remaining-requests": "59",
            "x-ratelimit-reset-requests": "1s",
            "x-ratelimit-remaining-tokens": "149984",
            "x-ratelimit-reset-tokens": "6m0s",
        },
        NOW,
    )
    assert room.requests == (59, 1.0) and room.tokens == (149984, 360.0)


def test_anthropic_headers_give_the_tightest_token_limit() -> None:
    room = room_from_headers(
        {
            "anthropic-ratelimit-requests-remaining": "4",
            "anthropic-ratelimit-requests-reset": "2025-12-01T12:00:30Z",
            "anthropic-ratelimit-input-tokens-remaining": "9000",
            "anthropic-ratelimit-input-tokens-reset": "2025-12-01T12:00:10Z",
            "anthropic-ratelimit-output-tokens-remaining": "800",
            "anthropic-ratelimit-output-tokens-reset": "2025-12-01T12:00:20Z",
        },
        NOW,
    )
    assert room.requests == (4, 30.0) and room.tokens == (800, 20.0)


def test_modelplug_stream_waits_when_the_server_said_no_requests_are_left(
    client_with: Any, clock: Any
) -> None:
    headers = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "7s"}
    fake = FakeModel([with_headers("1", headers), text("2")])
    client = client_with(fake)

    client.complete("fake/m", "hi")
    assert client.complete("fake/m", "hi").text == "2"

    assert clock.sleeps == [7.0]


def test_modelplug_stream_a_429_closes_the_room_for_its_retry_after(
    client_with: Any, clock: Any, http_error: Any
) -> None:
    fake = FakeModel([http_error(429, "12"), text("ok")])
    client = client_with(fake)

    with pytest.raises(ModelError):
        client.complete("fake/m", "hi")
    assert client.complete("fake/m", "hi").text == "ok"

    assert clock.sleeps == [12.0]
