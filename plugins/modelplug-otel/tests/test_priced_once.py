"""The call's cost: priced once, by the plugin where core would price it, and the
Response the caller gets carries the same cost the span does."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import modelplug_otel
import pytest
from modelplug import hookimpl
from modelplug.contract.types import Cost, Usage
from modelplug.testing import FakeModel, text


class CountingTable:
    """A pricing plugin that counts how often it is asked."""

    def __init__(self, amount: str | None) -> None:
        self.amount = amount
        self.asked = 0

    @hookimpl(tryfirst=True)
    def modelplug_price(self, route: Any, usage: Usage, price_factor: float) -> Cost | None:
        self.asked += 1
        if self.amount is None:
            return None
        return Cost(
            amount=Decimal(self.amount) * Decimal(str(price_factor)), currency="USD", source="test"
        )


def _cost_attribute(spans: Any) -> Any:
    (call,) = spans()
    return dict(call.attributes).get("modelplug.cost.usd")


@pytest.mark.parametrize("with_otel", [True, False])
def test_a_call_is_priced_once_with_or_without_the_plugin(
    make_client: Any, spans: Any, with_otel: bool
) -> None:
    table = CountingTable("0.25")
    plugins = [FakeModel([text("hi", usage=Usage(input=3, output=2))]), table]
    client = make_client(*plugins, *([modelplug_otel] if with_otel else []))

    response = client.complete("fake/m", "hi")

    assert response.cost is not None and response.cost.amount == Decimal("0.25")
    assert table.asked == 1
    if with_otel:
        assert _cost_attribute(spans) == 0.25


def test_an_unknown_price_falls_back_to_the_servers_cost_as_core_does(
    make_client: Any, spans: Any
) -> None:
    table = CountingTable(None)
    server = Cost(amount=Decimal("0.5"), currency="USD", source="server")
    answer = text("hi", usage=Usage(input=3, output=2)).model_copy(update={"server_cost": server})
    fake = FakeModel([answer])
    client = make_client(fake, table, modelplug_otel)

    response = client.complete("fake/m", "hi")

    assert response.cost == server
    assert table.asked == 1
    assert _cost_attribute(spans) == 0.5
