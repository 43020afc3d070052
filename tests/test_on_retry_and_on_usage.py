"""on_retry and on_usage, on the Client and per call: a 429 with Retry-After then a 200
(recorded Chat Completions bytes on the loopback wire server), retried by the fallback
policy on a fake clock; a policy that gives up; a priced and an unpriced model; async
callbacks; a callback that raises."""

from __future__ import annotations

import asyncio
import json
import logging
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from modelplug import Client, ModelError, RetryEvent, UsageEvent
from modelplug_kit import MemoryCooldowns
from modelplug_kit.testing import WireServer, load_recording

pytest.importorskip("modelplug_openai_compat")
policy_module = pytest.importorskip("modelplug_fallback.policy")

ROOT = Path(__file__).resolve().parent.parent
TEXT = load_recording(ROOT / "plugins/modelplug-openai-compat/tests/recordings/openai_text.sse")
# OpenAI's 429 body, as its error-codes guide shows it.
RATE_LIMITED = json.dumps(
    {
        "error": {
            "message": "Rate limit reached for gpt-4o-mini in organization org-x on requests "
            "per min (RPM): Limit 3, Used 3, Requested 1.",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
)
SPEC = "wire/gpt-4o-mini"
PATH = "/v1/chat/completions"
# USD per million tokens; the recording's usage is 1250 in (1024 of them cached), 9 out.
PRICE = {"input": 0.15, "output": 0.6, "cache_read": 0.075, "cache_write": 0}


class FakeClock:
    """The policy's clock and sleep: a wait only moves the clock."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def client(make_client: Any, wire_server: WireServer, clock: FakeClock) -> Any:
    def make(priced: bool = True, retries: int = 3, **kwargs: Any) -> Client:
        policy = policy_module.FallbackPolicy(
            {"retries": retries},
            store=MemoryCooldowns(clock=clock),
            clock=clock,
            sleep=clock.sleep,
        )
        config: dict[str, Any] = {
            "providers": {
                # Not local: a server of your own is priced as free.
                "wire": {
                    "type": "openai-compatible",
                    "base_url": wire_server.url + "/v1",
                    "local": False,
                }
            }
        }
        if priced:
            config["models"] = {SPEC: {"price": PRICE}}
        return make_client(policy, "modelplug-openai-compat", config=config, **kwargs)  # type: ignore[no-any-return]

    return make


def rate_limited(wire_server: WireServer, times: int = 1) -> None:
    for _ in range(times):
        wire_server.add(
            RATE_LIMITED,
            path=PATH,
            status=429,
            headers={"retry-after": "4"},
            content_type="application/json",
        )


def test_on_retry_hears_the_wait_and_the_recovery_on_the_client_then_the_call(
    client: Any, wire_server: WireServer, clock: FakeClock
) -> None:
    rate_limited(wire_server)
    wire_server.add(TEXT, path=PATH, content_type="text/event-stream")
    heard: list[tuple[str, RetryEvent]] = []
    made = client(on_retry=lambda event: heard.append(("client", event)))

    response = made.complete(SPEC, "hi", on_retry=lambda event: heard.append(("call", event)))

    assert response.text == "Sockets wait in silence — café ☕"
    assert clock.sleeps == [4.0]
    assert [who for who, _ in heard] == ["client", "call", "client", "call"]
    waiting, recovered = heard[0][1], heard[2][1]
    assert heard[1][1] == waiting and heard[3][1] == recovered
    assert (waiting.outcome, waiting.attempt, waiting.max_attempts) == ("waiting", 1, 3)
    assert waiting.wait_s == 4.0 and waiting.status == 429
    assert waiting.route == SPEC and waiting.reason.startswith("rate limited")
    assert "retry 1 of 3 in 4.0 s" in waiting.message
    assert (recovered.outcome, recovered.attempt, recovered.wait_s) == ("recovered", 1, 0.0)


def test_on_retry_hears_the_policy_give_up_and_on_usage_hears_nothing(
    client: Any, wire_server: WireServer, clock: FakeClock
) -> None:
    rate_limited(wire_server, times=3)
    retries: list[RetryEvent] = []
    usage: list[UsageEvent] = []
    with pytest.raises(ModelError) as caught:
        client(retries=2).complete(SPEC, "hi", on_retry=retries.append, on_usage=usage.append)
    assert caught.value.kind == "rate_limit"
    assert [(e.outcome, e.attempt) for e in retries] == [
        ("waiting", 1),
        ("waiting", 2),
        ("gave_up", 2),
    ]
    assert "no retries left" in retries[-1].reason
    assert clock.sleeps == [4.0, 4.0]
    assert usage == [], "a call that failed finished nothing"


def test_on_usage_totals_tokens_and_cost_of_a_priced_model(
    client: Any, wire_server: WireServer
) -> None:
    wire_server.add(TEXT, path=PATH, content_type="text/event-stream")
    wire_server.add(TEXT, path=PATH, content_type="text/event-stream")
    heard: list[UsageEvent] = []
    made = client(on_usage=heard.append)
    made.complete(SPEC, "hi")
    made.complete(SPEC, "hi again")
    assert len(heard) == 2
    first = heard[0]
    assert first.route == SPEC
    assert (first.usage.total_input, first.usage.output) == (1250, 9)
    assert first.cost is not None and first.cost.currency == "USD"
    expected = (
        Decimal(first.usage.input) * Decimal("0.15")
        + Decimal(first.usage.cache_read) * Decimal("0.075")
        + Decimal(9) * Decimal("0.6")
    ) / Decimal(1_000_000)
    assert first.cost.amount == expected
    assert first.response.text == "Sockets wait in silence — café ☕"


def test_on_usage_of_an_unpriced_model_says_the_cost_is_unknown(
    client: Any, wire_server: WireServer
) -> None:
    wire_server.add(TEXT, path=PATH, content_type="text/event-stream")
    heard: list[UsageEvent] = []
    client(priced=False).complete(SPEC, "hi", on_usage=heard.append)
    (event,) = heard
    assert event.cost is None and event.usage.output == 9


def test_async_callbacks_are_awaited(
    client: Any, wire_server: WireServer, clock: FakeClock
) -> None:
    rate_limited(wire_server)
    wire_server.add(TEXT, path=PATH, content_type="text/event-stream")
    heard: list[str] = []

    async def on_retry(event: RetryEvent) -> None:
        await asyncio.sleep(0)
        heard.append(event.outcome)

    async def on_usage(event: UsageEvent) -> None:
        await asyncio.sleep(0)
        heard.append(f"usage {event.usage.output}")

    async def run() -> None:
        made = client()
        try:
            await made.acomplete(SPEC, "hi", on_retry=on_retry, on_usage=on_usage)
        finally:
            await made.aclose()

    asyncio.run(run())
    assert heard == ["waiting", "recovered", "usage 9"]


def test_a_callback_that_raises_is_logged_and_the_call_goes_on(
    client: Any, wire_server: WireServer, caplog: pytest.LogCaptureFixture
) -> None:
    rate_limited(wire_server)
    wire_server.add(TEXT, path=PATH, content_type="text/event-stream")

    def broken(event: object) -> None:
        raise RuntimeError("the observer's own bug")

    with caplog.at_level(logging.WARNING, logger="modelplug"):
        response = client().complete(SPEC, "hi", on_retry=broken, on_usage=broken)
    assert response.text == "Sockets wait in silence — café ☕"
    raised = [r for r in caplog.records if "callback" in r.getMessage()]
    assert [r.getMessage().split(" callback")[0] for r in raised] == [
        "modelplug: the on_retry",
        "modelplug: the on_retry",
        "modelplug: the on_usage",
    ]
    assert all(r.exc_info and "the observer's own bug" in str(r.exc_info[1]) for r in raised)
