"""Budgets: each attempt reserves its maximum cost and tokens before it sends, settles
with the real ones after; a call that cannot fit ends before any byte is sent."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from modelplug.contract.types import Price, Usage
from modelplug.testing import FakeModel, text
from modelplug_kit import from_nano
from modelplug_limits import BudgetExceededError, UnknownPriceError

# 10 USD per million input and output tokens: 1000 tokens cost 0.01.
PRICE = Price(input=Decimal(10), output=Decimal(10))


def budget(**fields: Any) -> dict[str, Any]:
    return {"budgets": {"daily": {"period": "day", **fields}}}


def test_modelplug_stream_refuses_a_call_that_cannot_fit_before_sending(
    client_with: Any,
) -> None:
    fake = FakeModel([text("never")], price=PRICE)
    client = client_with(fake, limits_options=budget(spend="0.001"))

    with pytest.raises(BudgetExceededError) as caught:
        client.complete("fake/m", "hi", max_tokens=1000)

    assert fake.requests == []  # nothing was sent
    error = caught.value
    assert error.budget == "daily" and error.measure == "spend"
    assert error.spent == "0 USD" and error.limit == "0.001 USD"
    assert error.resets == "2025-12-02T00:00:00Z"
    assert error.kind == "quota" and not error.error_class.fallback
    assert "budget 'daily' (spend) would be exceeded: 0 USD spent of 0.001 USD" in str(error)


def test_modelplug_stream_settles_each_call_with_its_real_cost(
    client_with: Any, counters: Any
) -> None:
    answers = [text("a", usage=Usage(input=100, output=100)) for _ in range(3)]
    fake = FakeModel(answers, price=PRICE)
    client = client_with(fake, limits_options=budget(spend="0.05"))

    for _ in range(3):
        client.complete("fake/m", "hi", max_tokens=1000)

    (key,) = [k for k in counters.live_keys() if k.startswith("budget:")]
    value, _ = counters.read_now([key])[0]
    assert from_nano(value) == Decimal("0.006")  # 3 x 200 tokens x 10 USD/M


def test_modelplug_stream_refuses_once_the_spend_is_used_up(client_with: Any) -> None:
    answers = [text("a", usage=Usage(input=400, output=600)) for _ in range(3)]
    fake = FakeModel(answers, price=PRICE)
    # Each call reserves up to ~0.0101 and really costs 0.01.
    client = client_with(fake, limits_options=budget(spend="0.025"))

    client.complete("fake/m", "hi", max_tokens=1000)
    client.complete("fake/m", "hi", max_tokens=1000)
    with pytest.raises(BudgetExceededError) as caught:
        client.complete("fake/m", "hi", max_tokens=1000)

    assert len(fake.requests) == 2
    assert caught.value.spent == "0.02 USD"


def test_modelplug_stream_keeps_the_whole_reservation_without_reported_usage(
    client_with: Any, counters: Any
) -> None:
    unreported = text("a", usage=Usage(input=1, output=1, reported=False))
    fake = FakeModel([unreported], price=PRICE)
    client = client_with(fake, limits_options=budget(tokens=100_000))

    client.complete("fake/m", "hi", max_tokens=1000)

    (key,) = [k for k in counters.live_keys() if k.startswith("budget:")]
    assert counters.read_now([key])[0][0] > 1000  # the estimate plus max_tokens, kept


def test_modelplug_stream_refuses_a_model_of_unknown_price_under_a_spend_budget(
    client_with: Any,
) -> None:
    fake = FakeModel([text("never")])  # no price
    client = client_with(fake, limits_options=budget(spend="5"))

    with pytest.raises(UnknownPriceError) as caught:
        client.complete("fake/m", "hi")

    assert fake.requests == []
    error = caught.value
    assert isinstance(error, BudgetExceededError)  # what a caller already catches
    assert error.budget == "daily" and error.measure == "spend" and error.spent is None
    message = str(error)
    # What is unknown, and both settings that decide.
    assert message.startswith(
        "budget 'daily' (5 USD per day) cannot count a call to fake/m: "
        "the price of fake/m is unknown"
    )
    assert '[models."fake/m"] price = { input = ..., output = ... }' in message
    assert '[limits] unknown_price = "tokens"' in message
    assert "an unknown amount" not in message  # what was spent is known, not read
    # Another model of known price may answer: a fallback, no cooldown.
    assert error.error_class.fallback and error.error_class.retry_after == 0


def test_modelplug_stream_names_the_currency_when_the_price_is_in_another(
    client_with: Any,
) -> None:
    fake = FakeModel([text("never")], price=PRICE)  # USD
    client = client_with(fake, limits_options=budget(spend="5", currency="EUR"))

    with pytest.raises(UnknownPriceError) as caught:
        client.complete("fake/m", "hi")

    assert fake.requests == []
    assert "fake/m is priced in USD, not EUR" in str(caught.value)
    assert '[limits.budgets.daily] currency = "USD"' in str(caught.value)
    assert '[limits] unknown_price = "tokens"' in str(caught.value)


def test_modelplug_stream_counts_an_unknown_price_by_tokens_when_asked(
    client_with: Any, counters: Any
) -> None:
    fake = FakeModel([text("ok", usage=Usage(input=10, output=20))])
    options = {"unknown_price": "tokens", **budget(spend="5", tokens=10_000)}
    client = client_with(fake, limits_options=options)

    assert client.complete("fake/m", "hi", max_tokens=100).text == "ok"
    keys = [k for k in counters.live_keys() if k.startswith("budget:")]
    assert [k.split(":")[3] for k in keys] == ["tokens"]  # no spend counted as zero
    assert counters.read_now(keys)[0][0] == 30


def test_modelplug_stream_a_per_call_budget_refuses_a_large_call_only(client_with: Any) -> None:
    fake = FakeModel([text("small")], price=PRICE)
    client = client_with(fake, limits_options=budget(spend="0.01", period="call"))

    with pytest.raises(BudgetExceededError):
        client.complete("fake/m", "hi", max_tokens=5000)
    assert client.complete("fake/m", "hi", max_tokens=100).text == "small"


def test_modelplug_stream_scopes_a_budget_to_a_role_or_a_model(client_with: Any) -> None:
    fake = FakeModel([text("other model")], price=PRICE)
    options = budget(spend="0.0001", scope="model:fake/expensive")
    client = client_with(fake, limits_options=options)

    with pytest.raises(BudgetExceededError) as caught:
        client.complete("fake/expensive", "hi", max_tokens=1000)
    assert caught.value.error_class.fallback  # another model may fit
    assert client.complete("fake/cheap", "hi", max_tokens=1000).text == "other model"


def test_modelplug_stream_a_role_budget_counts_only_calls_through_that_role(
    client_with: Any,
) -> None:
    fake = FakeModel([text("direct")], price=PRICE)
    options = budget(spend="0.0001", scope="role:coder")
    client = client_with(fake, limits_options=options, config={"roles": {"coder": "fake/m"}})

    with pytest.raises(BudgetExceededError, match="budget 'daily'"):
        client.complete("coder", "hi", max_tokens=1000)
    assert client.complete("fake/m", "hi", max_tokens=1000).text == "direct"


def test_modelplug_stream_a_project_budget_counts_each_project_apart(
    make_client: Any, limits: Any, counters: Any, tmp_path: Any
) -> None:
    options = budget(tokens=100_000, scope="project")
    for name in ("one", "two"):
        project = tmp_path / name
        project.mkdir()
        (project / "modelplug.toml").write_text("")
        client = make_client(limits(**options), FakeModel([text(name)]), project_dir=project)
        client.complete("fake/m", "hi", max_tokens=100)

    keys = [k for k in counters.live_keys() if k.startswith("budget:")]
    assert len(keys) == 2
    assert {k.split(":")[3].split("-")[0] for k in keys} == {"one", "two"}
