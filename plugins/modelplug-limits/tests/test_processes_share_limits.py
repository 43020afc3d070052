"""Without Redis, the processes of one machine share their counters through the SQLite
file in the data directory: two worker processes making calls at once are admitted
exactly as many as one rpm limit or one spend budget allows, all told; and a daily
budget carries from one ``modelplug chat`` to the next, as the plugin's docs page
(docs/plugins/limits.md) says.

The workers are real subprocesses (``python -c``) that share nothing but the data
directory. Their policy reads a fixed clock (the start of an hour), so every call falls
in one rate window and one day whatever the real time; the store keeps its own, real
clock, and each counter its relative lifetime (an hour, the rest of the day)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

from modelplug_kit import from_nano
from modelplug_limits import SqliteCounters

NOW = 1_764_590_400.0  # 2025-12-01T12:00:00Z, the start of an hour
CALLS = 15  # per worker, all at once

WORKER = r"""
import asyncio, json, sys
from decimal import Decimal
from modelplug import Client, ModelplugError
from modelplug.testing import FakeModel, text
from modelplug.contract.types import Price, Usage
from modelplug_limits import LimitsPolicy

spec = json.loads(sys.argv[1])
# Unreported usage: every call keeps what it reserved, so what was admitted is exact.
answer = text("ok", usage=Usage(input=5, output=5, reported=False))
# 1000 USD per million output tokens and max_tokens=10: each call may cost 0.01 USD.
fake = FakeModel([answer] * spec["calls"], price=Price(input=Decimal(0), output=Decimal(1000)))
policy = LimitsPolicy(clock=lambda: spec["now"])  # no store given: the settings choose
client = Client(plugins=[fake, policy], entry_points=False, config=spec["config"])

async def one():
    try:
        await client.acomplete("fake/m", "hi", max_tokens=10)
        return "ok"
    except ModelplugError as exc:
        return type(exc).__name__ + ":" + str(getattr(exc, "kind", ""))

async def main():
    print("ready", flush=True)
    sys.stdin.readline()  # every worker starts at once
    return await asyncio.gather(*(one() for _ in range(spec["calls"])))

results = asyncio.run(main())
store = type(policy.setup(client)[1]).__name__
print(json.dumps({"results": results, "sent": len(fake.requests), "store": store}))
"""


def environment(tmp_path: Path) -> dict[str, str]:
    tmp_path.mkdir(exist_ok=True)
    user_file = tmp_path / "config.toml"
    if not user_file.exists():
        user_file.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
    env["MODELPLUG_CONFIG"] = str(user_file)
    env["MODELPLUG_DATA_DIR"] = str(tmp_path / "data")
    return env


def run_workers(tmp_path: Path, config: dict[str, Any], workers: int = 2) -> list[Any]:
    spec = json.dumps({"config": config, "calls": CALLS, "now": NOW})
    started = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, spec],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment(tmp_path),
            cwd=tmp_path,
        )
        for _ in range(workers)
    ]
    for process in started:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    for process in started:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    out = []
    for process in started:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def counted(tmp_path: Path, prefix: str) -> int:
    store = SqliteCounters(tmp_path / "data" / "limits.sqlite3")
    (key,) = [k for k in store.live_keys() if k.startswith(prefix)]
    value = store.read_now([key])[0]
    assert value is not None
    return value[0]


def test_two_processes_are_admitted_exactly_one_rpm_limit_between_them(tmp_path: Path) -> None:
    config = {"limits": {"fake/m": {"rpm": 20, "window": 3600}, "max_wait": 0}}

    workers = run_workers(tmp_path, config)

    results = Counter(r for worker in workers for r in worker["results"])
    assert [w["store"] for w in workers] == ["SqliteCounters", "SqliteCounters"]
    assert results == {"ok": 20, "ModelError:rate_limit": 2 * CALLS - 20}
    assert sum(w["sent"] for w in workers) == 20  # a refused call sent nothing
    assert all(w["sent"] > 0 for w in workers)  # both took part
    assert counted(tmp_path, "rate:fake/m:requests:") == 20

    # Each in its own memory, the same two would be admitted everything they asked.
    alone = run_workers(
        tmp_path / "alone", {**config, "limits": {**config["limits"], "store": "memory"}}
    )
    assert sum(w["sent"] for w in alone) == 2 * CALLS


def test_two_processes_are_admitted_exactly_one_spend_budget_between_them(
    tmp_path: Path,
) -> None:
    config = {"limits": {"budgets": {"daily": {"spend": "0.12", "period": "day"}}}}

    workers = run_workers(tmp_path, config)

    results = Counter(r for worker in workers for r in worker["results"])
    assert results == {"ok": 12, "BudgetExceededError:quota": 2 * CALLS - 12}
    assert sum(w["sent"] for w in workers) == 12
    spent = counted(tmp_path, "budget:daily:all:spend:2025-12-01")
    assert from_nano(spent) == Decimal("0.12")  # 12 calls of at most 0.01 USD


# -- the CLI: a daily budget from one run to the next -----------------------------------

DAILY = """
# echo's price, made dear: 1 USD per token, so a few calls fill the budget.
[models."echo/echo"]
price = { input = 1000000, output = 1000000 }

[limits.budgets.daily]
spend = "5.00"
period = "day"
"""


def modelplug(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "modelplug.cli", *args],
        capture_output=True,
        text=True,
        env=environment(tmp_path),
        cwd=tmp_path,
        timeout=60,
    )


def test_a_daily_budget_carries_from_one_cli_run_to_the_next(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(DAILY)

    first = modelplug(tmp_path, "chat", "-m", "echo", "--max-tokens", "1", "hi")
    between = modelplug(tmp_path, "limits")
    second = modelplug(tmp_path, "chat", "-m", "echo", "--max-tokens", "1", "hi")

    assert (first.returncode, first.stdout) == (0, "hi\n"), first.stderr
    # echo/echo answered 1 token in and 1 out: 2 USD, counted in the file.
    assert "budget daily (spend, per day, all): spent 2 USD of 5.00 USD, remaining 3 USD" in (
        between.stdout
    )
    # The next process sees it: 2 spent and up to 4 more would pass 5.
    assert second.returncode == 1 and second.stdout == ""
    assert "budget 'daily' (spend) would be exceeded: 2 USD spent of 5 USD" in second.stderr
    assert "[limits.budgets.daily] spend in your settings file sets the limit" in second.stderr
    assert "Traceback" not in second.stderr


# -- a long-lived process and short ones beside it ---------------------------------------

LONG_LIVED = r"""
import asyncio, json, sys
from decimal import Decimal
from modelplug import Client, ModelplugError
from modelplug.testing import FakeModel, text
from modelplug.contract.types import Price, Usage
from modelplug_limits import LimitsPolicy

spec = json.loads(sys.argv[1])
answer = text("ok", usage=Usage(input=5, output=5, reported=False))
fake = FakeModel([answer] * 50, price=Price(input=Decimal(0), output=Decimal(1000)))
policy = LimitsPolicy(clock=lambda: spec["now"])
client = Client(plugins=[fake, policy], entry_points=False, config=spec["config"])

async def one():
    try:
        await client.acomplete("fake/m", "hi", max_tokens=10)
    except ModelplugError as exc:
        return type(exc).__name__
    # What it has spent, as a gateway reads it to show a key's budget: a read beside the
    # writes, on a connection of its own.
    store = policy.setup(client)[1]
    await store.read(store.live_keys())
    return "ok"

async def main():
    for line in sys.stdin:  # one call per line, the store kept open in between
        print(json.dumps(await one()), flush=True)

asyncio.run(main())
"""


def test_a_running_process_sees_what_processes_that_came_and_went_spent(
    tmp_path: Path,
) -> None:
    # The running process's connections once lost their file locks to the first short
    # process's close: that process deleted the WAL, and the running one went on counting
    # in a snapshot nobody else saw (and admitted past the budget).
    config = {"limits": {"budgets": {"daily": {"spend": "0.06", "period": "day"}}}}
    spec = json.dumps({"config": config, "calls": 2, "now": NOW})
    running = subprocess.Popen(
        [sys.executable, "-c", LONG_LIVED, spec],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(tmp_path),
        cwd=tmp_path,
    )
    assert running.stdin is not None and running.stdout is not None

    def call() -> str:
        running.stdin.write("call\n")  # type: ignore[union-attr]
        running.stdin.flush()  # type: ignore[union-attr]
        return str(json.loads(running.stdout.readline()))  # type: ignore[union-attr]

    def short_process() -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", WORKER, spec],
            input="go\n",
            capture_output=True,
            text=True,
            env=environment(tmp_path),
            cwd=tmp_path,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return list(json.loads(done.stdout.strip().splitlines()[-1])["results"])

    try:
        # Each round: the running process spends 0.01, a short one 0.02 (two calls).
        for _ in range(2):
            assert call() == "ok"
            assert short_process() == ["ok", "ok"]
        # 0.06 spent of 0.06: the running process must see it and refuse.
        assert call() == "BudgetExceededError"
        spent = counted(tmp_path, "budget:daily:all:spend:2025-12-01")
        assert from_nano(spent) == Decimal("0.06")
    finally:
        running.stdin.close()
        running.wait(timeout=30)
