"""``modelplug_describe_route``: the budgets and rate limits that count a call on a route,
what each has used now, the room its server reported last, a price a spend budget
lacks, and the store, for ``modelplug resolve``."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

from modelplug import Client
from modelplug.contract.types import Price, Usage
from modelplug.testing import FakeModel, text

PRICE = Price(input=Decimal(10), output=Decimal(10))
OPTIONS = {
    "fake/m": {"rpm": 10},
    "fake": {"tpm": 100000},
    "other/x": {"rpm": 5},
    "budgets": {
        "daily": {"spend": "1.00", "period": "day"},
        "other": {"tokens": 50, "scope": "model:other/x"},
    },
}


def limits_section(client: Client, spec: str) -> dict[str, Any]:
    route = client.resolve(spec)

    async def gather() -> list[Any]:
        found = client.hook.modelplug_describe_route(route=route, client=client)
        return [await each for each in found if each is not None]

    (section,) = [s for s in asyncio.run(gather()) if s and s["section"] == "limits"]
    return section


def test_modelplug_describe_route(client_with: Any, clock: Any) -> None:
    # What counts a call on fake/m (not other/x's), with its use after one call.
    answered = text("a", usage=Usage(input=100, output=100))
    answered.metadata["rate_limits"] = {
        "x-ratelimit-remaining-requests": "42",
        "x-ratelimit-reset-requests": "20s",
    }
    client = client_with(FakeModel([answered], price=PRICE), limits_options=OPTIONS)
    client.complete("fake/m", "hi", max_tokens=1000)
    clock.now += 15

    section = limits_section(client, "fake/m")

    assert section["lines"] == [
        "budget daily (spend, per day, all): spent 0.002 USD of 1.00 USD, remaining 0.998 USD, "
        "resets 2025-12-02T00:00:00Z",
        "rate fake/m (requests): 1 of 10 per 60 s, resets in 45.0 s",
        "rate fake (tokens): 200 of 100000 per 60 s, resets in 45.0 s",
        "server's room for fake/m (requests): 42 left, for 5.0 s",
        f"store: MemoryCounters ({section['where']})",
    ]  # not the budget or the rate of other/x
    assert [row["kind"] for row in section["limits"]] == ["budget", "rate", "rate", "learned"]
    assert section["limits"][0]["spent"] == "0.002 USD"


def test_modelplug_describe_route_says_a_spend_budget_refuses_a_model_of_unknown_price(
    client_with: Any,
) -> None:
    client = client_with(FakeModel(), limits_options={"budgets": OPTIONS["budgets"]})

    lines = limits_section(client, "fake/m")["lines"]

    assert lines[1] == (
        "price of fake/m: unknown, so a call is refused by the spend budget 'daily' "
        '([limits] unknown_price = "refuse"; give fake/m a price, or set unknown_price = "tokens")'
    )


def test_modelplug_describe_route_names_the_setting_when_nothing_counts_the_route(
    make_client: Any,
) -> None:
    client = make_client("modelplug-limits", FakeModel())

    section = limits_section(client, "fake/m")

    path = client.settings.data_dir() / "limits.sqlite3"
    assert section["lines"] == [
        "no budget or rate limit counts calls on this route ([limits] in your settings)",
        f"store: SqliteCounters ({path}, shared by this machine's processes)",
    ]
    assert section["limits"] == [] and section["store"] == "SqliteCounters"
