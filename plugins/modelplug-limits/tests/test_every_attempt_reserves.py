"""Retries and fallbacks reserve again: the limits policy runs inside the fallback
policy, which re-opens each attempt through it (``client.open_stream(...,
exclude=<fallback policies>)``). A failed attempt keeps its whole reservation."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import pytest
from modelplug import ModelError
from modelplug.contract.types import Done, Notice, Price, Usage
from modelplug.testing import FakeModel, text

pytest.importorskip("modelplug_fallback", reason="composition with modelplug-fallback")
from modelplug_fallback.policy import FallbackPolicy
from modelplug_kit import MemoryCooldowns

PRICE = Price(input=Decimal(10), output=Decimal(10))


@pytest.fixture
def fallback(clock: Any) -> FallbackPolicy:
    return FallbackPolicy(
        {"retries": 1}, store=MemoryCooldowns(clock=clock), clock=clock, sleep=clock.sleep
    )


def tokens_counted(counters: Any) -> int:
    (key,) = [k for k in counters.live_keys() if k.startswith("budget:")]
    return int(counters.read_now([key])[0][0])


def test_modelplug_stream_a_retry_reserves_again(
    client_with: Any, counters: Any, fallback: Any, http_error: Any
) -> None:
    fake = FakeModel([http_error(503), text("ok", usage=Usage(input=10, output=10))])
    options = {"budgets": {"t": {"tokens": 1_000_000, "period": "day"}}}
    client = client_with(fallback, fake, limits_options=options)

    response = client.complete("fake/m", "hi", max_tokens=1000)

    assert response.text == "ok" and len(fake.requests) == 2
    # The failed attempt keeps its reservation (~1000 tokens); the second settles to 20.
    assert 1000 < tokens_counted(counters) - 20 < 1100


def test_modelplug_stream_a_fallback_that_fits_answers_when_the_first_model_does_not(
    client_with: Any, fallback: Any
) -> None:
    dear = FakeModel([text("never")], provider="a", price=PRICE)
    cheap = FakeModel([text("from b")], provider="b", price=Price(input=Decimal(0), output=0))
    options = {"budgets": {"a": {"spend": "0.001", "period": "day", "scope": "model:a/m"}}}
    config = {"fallbacks": {"a/m": ["b/m"]}}
    client = client_with(fallback, dear, cheap, limits_options=options, config=config)
    seen: list[Any] = []

    response = client.complete("a/m", "hi", max_tokens=1000, on_event=seen.append)

    assert response.text == "from b" and dear.requests == []
    switch = next(e for e in seen if isinstance(e, Notice) and e.kind == "fallback")
    assert "budget 'a' exceeded" in switch.message


def test_modelplug_stream_a_budget_for_everything_ends_the_call_despite_fallbacks(
    client_with: Any, fallback: Any
) -> None:
    first = FakeModel([text("never")], provider="a", price=PRICE)
    second = FakeModel([text("never")], provider="b", price=PRICE)
    options = {"budgets": {"all": {"spend": "0.001", "period": "month"}}}
    client = client_with(
        fallback, first, second, limits_options=options, config={"fallbacks": {"a/m": ["b/m"]}}
    )

    with pytest.raises(ModelError, match="budget 'all'"):
        client.complete("a/m", "hi", max_tokens=1000)
    assert first.requests == [] and second.requests == []


def test_modelplug_stream_the_limits_wrapper_runs_inside_the_fallback_wrapper(
    client_with: Any, fallback: Any
) -> None:
    client = client_with(fallback, FakeModel([text("x")]))
    order = [impl.plugin for impl in client.hook.modelplug_stream.get_hookimpls()]
    wrappers = [p for p in order if getattr(p, "modelplug_policy", None)]

    # pluggy calls the last first: the fallback is outermost, limits innermost.
    assert [w.modelplug_policy for w in wrappers] == ["limits", "fallback"]


def test_modelplug_stream_a_retry_is_announced_recovered_only_once_the_model_answers(
    client_with: Any, fallback: Any, http_error: Any
) -> None:
    # The limits policy hands the fallback policy the retry's stream as soon as its
    # reservation is made; "recovered" must still wait for the model's first event.
    from modelplug import hookimpl
    from modelplug.contract.types import Route, TextDelta

    answered: list[bool] = []

    class Flaky:
        name = "flaky"
        calls = 0

        @hookimpl
        def modelplug_resolve(self, spec: str) -> Route | None:
            return Route(provider="flaky", model="m") if spec == "flaky/m" else None

        @hookimpl
        def modelplug_stream(self, route: Route) -> Any:
            if route.provider != "flaky":
                return None
            self.calls += 1
            first = self.calls == 1

            async def events() -> Any:
                if first:
                    raise http_error(503)
                answered.append(True)
                yield TextDelta(text="ok")
                yield Done(response=text("ok").model_copy(update={"model": "flaky/m"}))

            return events()

    client = client_with(fallback, Flaky())
    seen: list[bool] = []

    def on_event(event: Any) -> None:
        if isinstance(event, Notice) and event.details.get("phase") == "recovered":
            seen.append(bool(answered))

    # Async: on_event runs as each event comes (the sync facade hands them in batches).
    response = asyncio.run(client.acomplete("flaky/m", "hi", on_event=on_event))
    assert response.text == "ok" and seen == [True]
