"""Retries and fallbacks through the real modelplug-fallback policy: one CLIENT span
for the call, one child span per attempt (the 429, the wait, the model that answered)."""

from __future__ import annotations

from typing import Any

import modelplug_otel
import pytest
from modelplug import ModelError
from modelplug.contract.types import Usage
from modelplug.testing import FakeModel, text
from modelplug_fallback.policy import FallbackPolicy
from modelplug_kit import MemoryCooldowns
from opentelemetry.trace import SpanKind, StatusCode


class Clock:
    """A clock and a sleep that only advances it: the tests never really wait."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def policy(**options: Any) -> FallbackPolicy:
    clock = Clock()
    return FallbackPolicy(
        options, store=MemoryCooldowns(clock=clock), clock=clock, sleep=clock.sleep,
        random=lambda: 0.5,
    )  # fmt: skip


def tree(finished: list[Any]) -> tuple[Any, list[Any]]:
    (call,) = [s for s in finished if s.kind is SpanKind.CLIENT]
    attempts = sorted(
        (s for s in finished if s.name.startswith("attempt ")), key=lambda s: s.start_time
    )
    for attempt in attempts:
        assert attempt.parent.span_id == call.context.span_id
        assert attempt.context.trace_id == call.context.trace_id
        assert call.start_time <= attempt.start_time <= attempt.end_time <= call.end_time
    return call, attempts


def test_a_429_then_success_is_one_call_with_two_attempts(
    make_client: Any, spans: Any, http_error: Any
) -> None:
    fake = FakeModel([http_error(429, "2"), text("hello", usage=Usage(input=3, output=2))])
    # The policy registers first: otel's wrapper, registered after, is the outer one.
    client = make_client(policy(), modelplug_otel, fake)

    response = client.complete("fake/m", "hi", on_event=lambda e: None)

    assert response.text == "hello" and len(fake.requests) == 2
    call, attempts = tree(spans())
    assert [a.name for a in attempts] == ["attempt 1 fake/m", "attempt 2 fake/m"]
    failed, answered = attempts
    assert failed.attributes["error.type"] == "rate_limit"
    assert failed.attributes["modelplug.error.status"] == 429
    assert failed.status.status_code is StatusCode.ERROR
    assert "error.type" not in answered.attributes
    assert answered.attributes["gen_ai.response.model"] == "m"
    # The wait is on the call, between the two attempts.
    (wait,) = [e for e in call.events if e.name == "retry wait"]
    assert wait.attributes["modelplug.wait.seconds"] == 2.0
    assert failed.end_time <= wait.timestamp <= answered.start_time
    assert call.attributes["modelplug.attempt"] == 2
    assert call.attributes["gen_ai.usage.output_tokens"] == 2
    assert call.status.status_code is StatusCode.UNSET


def test_a_fallback_shows_the_failed_model_and_the_one_that_answered(
    make_client: Any, spans: Any, http_error: Any
) -> None:
    first = FakeModel([http_error(503)], provider="a")
    second = FakeModel([text("from b")], provider="b")
    client = make_client(
        policy(retries=0), modelplug_otel, first, second,
        config={"fallbacks": {"a/m": ["b/m"]}},
    )  # fmt: skip

    response = client.complete("a/m", "hi", on_event=lambda e: None)

    assert response.text == "from b"
    call, attempts = tree(spans())
    assert [a.name for a in attempts] == ["attempt 1 a/m", "attempt 2 b/m"]
    assert attempts[0].status.status_code is StatusCode.ERROR
    assert attempts[1].attributes["gen_ai.provider.name"] == "b"
    assert call.name == "chat m"
    assert call.attributes["modelplug.route"] == "b/m"
    assert call.attributes["gen_ai.response.model"] == "m"
    assert "fallback" in [e.name for e in call.events]


def test_a_retry_then_a_fallback_then_a_failure_is_one_failed_call(
    make_client: Any, spans: Any, http_error: Any
) -> None:
    first = FakeModel([http_error(429), http_error(429)], provider="a")
    second = FakeModel([http_error(401)], provider="b")
    client = make_client(
        policy(retries=1), modelplug_otel, first, second,
        config={"fallbacks": {"a/m": ["b/m"]}},
    )  # fmt: skip

    with pytest.raises(ModelError):
        client.complete("a/m", "hi", on_event=lambda e: None)

    call, attempts = tree(spans())
    assert [a.name for a in attempts] == ["attempt 1 a/m", "attempt 2 a/m", "attempt 3 b/m"]
    assert [a.attributes["error.type"] for a in attempts] == ["rate_limit", "rate_limit", "auth"]
    assert call.attributes["error.type"] == "auth"
    assert call.status.status_code is StatusCode.ERROR
