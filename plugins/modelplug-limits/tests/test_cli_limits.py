"""``modelplug limits`` (through ``modelplug_cli_commands``): spend and remaining per
budget, the current rate windows; run as the real command in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CONFIG = """
[limits."openai/gpt-4.1"]
rpm = 500

[limits.budgets.daily]
spend = "5.00"
period = "day"
"""


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
    env["MODELPLUG_CONFIG"] = str(config)
    env["MODELPLUG_DATA_DIR"] = str(tmp_path / "data")
    return subprocess.run(
        [sys.executable, "-m", "modelplug.cli", "limits", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )


def test_modelplug_cli_commands_limits_shows_budgets_and_windows(tmp_path: Path) -> None:
    done = run(tmp_path)

    assert done.returncode == 0, done.stderr
    assert "budget daily (spend, per day, all): spent 0 USD of 5.00 USD, remaining 5 USD" in (
        done.stdout
    )
    assert "rate openai/gpt-4.1 (requests): 0 of 500 per 60 s" in done.stdout
    # This machine's file, named, and who shares it.
    where = tmp_path / "data" / "limits.sqlite3"
    assert f"store: SqliteCounters ({where}, shared by this machine's processes)" in done.stdout


def test_modelplug_cli_commands_limits_prints_json(tmp_path: Path) -> None:
    done = run(tmp_path, "--json")

    data = json.loads(done.stdout)
    budget = next(row for row in data["limits"] if row["kind"] == "budget")
    assert budget["remaining"] == "5 USD" and budget["limit"] == "5.00 USD"
    assert data["store"] == "SqliteCounters"
