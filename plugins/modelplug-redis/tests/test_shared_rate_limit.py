"""4 processes x 25 concurrent calls, with R requests per window for the model in
``[limits]``, through one Redis: the shared limiter never lets more than R calls through
in one of its windows, all four processes together.

What is counted is the limiter's own decision, in its own windows: each worker watches
its store (a reservation taken counts in its window's counter, one given back counts
out) and the test adds the four up per window. A server that counts arrivals in its own
windows would also count the time from that decision to the request's arrival: on a
busy machine a call let through at the end of window N arrives in N+1, and such a count
measures the scheduler, not the limiter. The server here says only what it was sent
(every call once, a 429 for each beyond its limit, matching the calls' results).

Without the limiter, the same burst reaches a server that counts in minute-long
windows: unless the burst takes over a minute, its 100 calls fall in one or two of them,
so one holds at least 2R.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

LIMIT = 25  # R requests per window
WINDOW = 1.0  # seconds
CALLS = 4 * 25

pytest.importorskip("modelplug_openai_compat", reason="the workers call through it")


def config_for(server: Any, redis_config: dict[str, Any]) -> dict[str, Any]:
    return {
        "providers": {"lab": {"type": "openai-compatible", "base_url": server.url}},
        "limits": {"lab/m": {"rpm": LIMIT, "window": WINDOW}, "max_wait": 30},
        "redis": redis_config["redis"],
    }


def test_the_shared_limiter_keeps_four_processes_under_the_servers_limit(
    rate_server: Any, run_workers: Any, redis_config: dict[str, Any]
) -> None:
    limited = rate_server(LIMIT, WINDOW)
    with_limiter = run_workers(
        config_for(limited, redis_config),
        ["modelplug-openai-compat", "modelplug-limits", "modelplug-redis"],
        count_admissions=True,
    )

    unlimited = rate_server(LIMIT, 60.0)
    without = run_workers(config_for(unlimited, redis_config), ["modelplug-openai-compat"])

    admitted: Counter[str] = Counter()
    for worker in with_limiter:
        admitted.update(worker["admitted"])
    results = Counter(r.split(":")[-1] for worker in with_limiter for r in worker["results"])
    refused = Counter(r.split(":")[-1] for worker in without for r in worker["results"])
    print(
        f"\nlet through per window of the limiter (R = {LIMIT} per {WINDOW:g} s): "
        f"{sorted(admitted.values(), reverse=True)}; the server's windows: "
        f"{sorted(limited.seen.values(), reverse=True)}; without the limiter "
        f"{unlimited.busiest} at once, results {dict(refused)}"
    )
    assert not any(worker["problems"] for worker in with_limiter), [
        w["problems"] for w in with_limiter
    ]
    # Every call was let through once, and no window of the limiter took more than R.
    assert sum(admitted.values()) == CALLS
    assert max(admitted.values()) <= LIMIT, admitted
    assert all(key.startswith("rate:lab/m:requests:") for key in admitted), admitted
    assert any("wait" in worker["notices"] for worker in with_limiter)
    # The server was sent each call once; a call it refused is a rate_limit result.
    assert sum(limited.seen.values()) == CALLS
    over = sum(max(0, seen - LIMIT) for seen in limited.seen.values())
    assert results == Counter({"ok": CALLS - over, "rate_limit": over}) - Counter()
    # Without the limiter the four processes send far more than R at once.
    assert unlimited.busiest >= 2 * LIMIT
    assert refused["rate_limit"] > 0
