"""The policy around embedding calls: the inputs' estimate is reserved before the call
(no output tokens), settled with the usage and cost the provider reported; rate limits
wait and budgets refuse as for chat, before anything is sent."""

from __future__ import annotations

from collections.abc import Awaitable
from decimal import Decimal
from typing import Any

import pytest
from modelplug import Client, hookimpl
from modelplug.contract.types import (
    Embeddings,
    EmbedRequest,
    Endpoint,
    ModelInfo,
    Price,
    Provider,
    Route,
    Usage,
)
from modelplug_kit import from_nano
from modelplug_limits import BudgetExceededError

# 10 USD per million input tokens: 1000 tokens cost 0.01.
PRICE = Price(input=Decimal(10), output=Decimal(0))


class Embedder:
    """``emb/...``: one vector per input; reports ``used`` input tokens per call."""

    def __init__(self, used: int = 100, reported: bool = True) -> None:
        self.used = used
        self.reported = reported
        self.calls: list[list[str]] = []

    @hookimpl
    def modelplug_resolve(self, spec: str) -> Route | None:
        provider, _, model = spec.partition("/")
        if provider != "emb":
            return None
        info = ModelInfo(price=PRICE, price_source="test", context_window=8192)
        return Route(provider="emb", model=model, endpoint=Endpoint(type="emb"), info=info)

    @hookimpl
    def modelplug_providers(self) -> list[Provider]:
        return [Provider(name="emb", type="emb")]

    @hookimpl
    def modelplug_embed(
        self, route: Route, request: EmbedRequest, client: Client
    ) -> Awaitable[Embeddings] | None:
        if route.endpoint.type != "emb":
            return None
        return self._answer(request)

    async def _answer(self, request: EmbedRequest) -> Embeddings:
        self.calls.append(request.inputs)
        return Embeddings(
            vectors=[[0.5] for _ in request.inputs],
            usage=Usage(input=self.used, reported=self.reported),
        )


def budget(**fields: Any) -> dict[str, Any]:
    return {"budgets": {"daily": {"period": "day", **fields}}}


def budget_value(counters: Any, measure: str) -> int:
    (key,) = [k for k in counters.live_keys() if k.startswith("budget:") and measure in k]
    value, _ = counters.read_now([key])[0]
    return int(value)


def test_modelplug_embed_settles_the_budget_with_the_reported_tokens_and_cost(
    client_with: Any, counters: Any
) -> None:
    embedder = Embedder(used=300)
    client = client_with(embedder, limits_options=budget(spend="1", tokens=100_000))

    result = client.embed("emb/e", ["a long text " * 50, "another"])
    client.embed("emb/e", "third")

    assert len(embedder.calls) == 2
    assert result.cost is not None and result.cost.amount == Decimal("0.003")
    assert budget_value(counters, "tokens") == 600  # 2 x 300 reported, not the estimates
    assert from_nano(budget_value(counters, "spend")) == Decimal("0.006")


def test_modelplug_embed_keeps_the_estimate_when_usage_is_not_reported(
    client_with: Any, counters: Any
) -> None:
    client = client_with(Embedder(used=1, reported=False), limits_options=budget(tokens=10**6))

    client.embed("emb/e", ["x" * 400])

    # 400 characters + 8 for the input's separators, at 4 per token, rounded up.
    assert budget_value(counters, "tokens") == 102


def test_modelplug_embed_refuses_a_call_over_its_budget_before_sending(
    client_with: Any,
) -> None:
    embedder = Embedder()
    client = client_with(embedder, limits_options=budget(tokens=50))

    with pytest.raises(BudgetExceededError) as caught:
        client.embed("emb/e", ["word " * 100])

    assert embedder.calls == []  # nothing was sent
    assert caught.value.budget == "daily" and caught.value.measure == "tokens"


def test_modelplug_embed_waits_for_the_next_window_when_the_rpm_is_used(
    client_with: Any, clock: Any
) -> None:
    embedder = Embedder()
    client = client_with(embedder, limits_options={"emb/e": {"rpm": 1}, "max_wait": 120})

    client.embed("emb/e", "one")
    client.embed("emb/e", "two")

    assert len(embedder.calls) == 2
    assert len(clock.sleeps) == 1 and 0 < clock.sleeps[0] <= 60
