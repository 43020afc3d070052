"""A cooldown set in one process skips the model in another: the first worker's call
meets a 429 on lab/m and falls back to good/m; the second worker, in its own process,
skips lab/m (cooling, in Redis) and goes straight to good/m. With a table of its own in
each process (``[fallback] store = "memory"``; without Redis the default is this
machine's SQLite file, which modelplug-fallback's tests cover) the second worker asks
lab/m again."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

ENABLE = ["modelplug-openai-compat", "modelplug-fallback"]

pytest.importorskip("modelplug_openai_compat", reason="the workers call through it")


def config_for(bad: Any, good: Any, redis: dict[str, Any] | None) -> dict[str, Any]:
    config: dict[str, Any] = {
        "providers": {
            "lab": {"type": "openai-compatible", "base_url": bad.url},
            "good": {"type": "openai-compatible", "base_url": good.url},
        },
        "fallbacks": {"lab/m": ["good/m"]},
        "fallback": {"retries": 0},
    }
    if redis is not None:
        config["redis"] = {**redis["redis"], "timeout": 5.0}
    else:
        config["fallback"]["store"] = "memory"
    return config


def one_call_each(run_workers: Any, config: dict[str, Any], enable: list[str]) -> list[Any]:
    first = run_workers(config, enable, processes=1, calls=1, warm=None)
    second = run_workers(config, enable, processes=1, calls=1, warm=None)
    return [*first, *second]


def test_a_cooldown_set_in_one_process_skips_the_model_in_another(
    rate_server: Any, run_workers: Any, redis_config: dict[str, Any]
) -> None:
    bad, good = rate_server(0, 60.0), rate_server(10_000, 60.0)  # bad: always 429

    workers = one_call_each(
        run_workers, config_for(bad, good, redis_config), [*ENABLE, "modelplug-redis"]
    )

    bad_alone, good_alone = rate_server(0, 60.0), rate_server(10_000, 60.0)
    alone = one_call_each(run_workers, config_for(bad_alone, good_alone, None), ENABLE)

    asked = sum(bad.seen.values())
    asked_alone = sum(bad_alone.seen.values())
    print(f"\nlab/m asked by two processes: with Redis {asked}, without {asked_alone}")
    assert [w["results"] for w in workers] == [["ok"], ["ok"]]
    assert asked == 1  # only the first process met the 429
    assert sum(good.seen.values()) == 2
    assert Counter(workers[0]["notices"])["fallback"] == 1
    assert workers[1]["notices"] == []  # skipped silently: it is cooling
    assert asked_alone == 2
    assert [w["results"] for w in alone] == [["ok"], ["ok"]]
