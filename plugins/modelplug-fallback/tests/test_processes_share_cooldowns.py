"""Without Redis, a cooldown set in one process holds in the next: the first process's
call meets a 429 on a/m and falls back to b/m; a second process, started after it and
sharing nothing but the data directory, skips a/m (cooling, in this machine's SQLite
file) and goes straight to b/m, without a notice. With ``store = "memory"`` the second
process asks a/m again. The processes are real subprocesses (``python -c``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

WORKER = r"""
import json, sys
from modelplug import Client
from modelplug.testing import FakeModel, text
from modelplug.contract.types import Notice

class RateLimited(Exception):
    # What an SDK's 429 looks like to core's generic classifier.
    status_code = 429
    headers = {}

spec = json.loads(sys.argv[1])
first = FakeModel([RateLimited("Too Many Requests") if spec["a_fails"] else text("from a")],
                  provider="a")
second = FakeModel([text("from b")], provider="b")
client = Client(plugins=[first, second], enable=["modelplug-fallback"], config=spec["config"])
kinds = []
answer = client.complete(
    "a/m", "hi", on_event=lambda e: kinds.append(e.kind) if isinstance(e, Notice) else None
)
print(json.dumps({"text": answer.text, "asked_a": len(first.requests), "notices": kinds}))
"""

# A long cooldown: the second process comes however slowly the machine runs.
CONFIG: dict[str, Any] = {
    "fallbacks": {"a/m": ["b/m"]},
    "fallback": {"retries": 0, "cooldown_rate_limit": 3600},
}


def worker(tmp_path: Path, *, a_fails: bool, config: dict[str, Any]) -> dict[str, Any]:
    (tmp_path / "config.toml").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
    env["MODELPLUG_CONFIG"] = str(tmp_path / "config.toml")
    env["MODELPLUG_DATA_DIR"] = str(tmp_path / "data")
    done = subprocess.run(
        [sys.executable, "-c", WORKER, json.dumps({"a_fails": a_fails, "config": config})],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_cooldown_set_in_one_process_skips_the_model_in_the_next(tmp_path: Path) -> None:
    first = worker(tmp_path, a_fails=True, config=CONFIG)
    second = worker(tmp_path, a_fails=False, config=CONFIG)

    assert first == {"text": "from b", "asked_a": 1, "notices": ["fallback"]}
    assert second == {"text": "from b", "asked_a": 0, "notices": []}  # skipped in silence


def test_with_the_memory_store_the_next_process_asks_again(tmp_path: Path) -> None:
    config = {**CONFIG, "fallback": {**CONFIG["fallback"], "store": "memory"}}

    worker(tmp_path, a_fails=True, config=config)
    second = worker(tmp_path, a_fails=False, config=config)

    assert second == {"text": "from a", "asked_a": 1, "notices": []}
