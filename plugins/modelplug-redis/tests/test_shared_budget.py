"""4 processes x 25 concurrent calls share one spend budget through Redis: each call
reserves its maximum cost before it sends and settles with its real cost, so the total
settled never passes the budget, and every call that was refused was refused before it
reached the server."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import Any

import pytest
import redis as sync_redis

BUDGET = Decimal("0.30")
# 1000 USD per million tokens: the server reports 8 + 2 tokens, so a call costs 0.01.
PRICE = {"input": 1000, "output": 1000}
REAL_COST = Decimal("0.01")

pytest.importorskip("modelplug_openai_compat", reason="the workers call through it")


def test_four_processes_never_spend_past_a_shared_budget(
    rate_server: Any, run_workers: Any, redis_server: Any, redis_config: dict[str, Any]
) -> None:
    server = rate_server(10_000, 1.0)
    config = {
        "providers": {"lab": {"type": "openai-compatible", "base_url": server.url}},
        "models": {"lab/m": {"price": PRICE}},
        "limits": {"budgets": {"shared": {"spend": str(BUDGET), "period": "day"}}},
        "redis": {**redis_config["redis"], "timeout": 5.0},
    }

    workers = run_workers(
        config, ["modelplug-openai-compat", "modelplug-limits", "modelplug-redis"]
    )

    results = Counter(r for worker in workers for r in worker["results"])
    raw = sync_redis.Redis.from_url(redis_server.url)
    (key,) = raw.keys("*budget:shared*")
    settled = Decimal(int(raw.get(key))) / Decimal(10**9)
    print(f"\nshared budget {BUDGET} USD: settled {settled} USD, results {dict(results)}")
    assert not any(worker["problems"] for worker in workers)
    assert settled <= BUDGET
    assert results["ok"] >= 1
    assert settled == results["ok"] * REAL_COST  # every answered call settled exactly
    assert results["ok"] + results["BudgetExceededError:quota"] == 100
    assert sum(server.seen.values()) == results["ok"]  # refused calls sent nothing
