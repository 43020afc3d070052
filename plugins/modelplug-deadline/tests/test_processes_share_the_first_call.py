"""switch_after with a shared store counts from the first call recorded there: real
processes, each with its own fixed clock, one SQLite file: given in code
(``DeadlinePolicy(store=...)``) or named by the deadline's ``store`` setting."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import asyncio, sys
from pathlib import Path
from modelplug import Client
from modelplug_deadline import DeadlinePolicy
from modelplug_deadline.table import deadline_named

now, path = float(sys.argv[1]), sys.argv[2]

class Fixed:
    def now(self):
        return now
    async def sleep_until(self, moment):
        raise AssertionError("nothing waits here")

store = None
if path != "-":
    from modelplug_limits import SqliteCounters
    store = SqliteCounters(Path(path), clock=lambda: now)
policy = DeadlinePolicy(clock=Fixed(), store=store)
client = Client(plugins=[policy], entry_points=False)
deadline = deadline_named(client.settings, "nightly")
print(asyncio.run(policy.switch_time(client, deadline)))
"""


def switch_seen(tmp_path: Path, now: float, store: str, setting: str = "") -> float:
    config = tmp_path / "config.toml"
    config.write_text(
        '[deadlines.nightly]\nslow = "echo/a"\nfast = "echo/b"\nswitch_after = "1h"\n' + setting
    )
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(now), store],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            "MODELPLUG_CONFIG": str(config),
            "MODELPLUG_DATA_DIR": str(tmp_path / "data"),
            "PATH": "/usr/bin:/bin",
        },
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return float(done.stdout.strip().splitlines()[-1])


def test_processes_with_a_shared_store_switch_at_the_same_moment(tmp_path: Path) -> None:
    pytest.importorskip("modelplug_limits")
    shared = str(tmp_path / "first-calls.sqlite3")
    assert switch_seen(tmp_path, 1000, shared) == 1000 + 3600  # the first call: recorded
    assert switch_seen(tmp_path, 2000, shared) == 1000 + 3600  # another process: the same
    assert switch_seen(tmp_path, 2000, "-") == 2000 + 3600  # without the store: its own
    # The record lasts until the switch: a process whose first call comes after it
    # begins a new period.
    assert switch_seen(tmp_path, 5000, shared) == 5000 + 3600
    assert switch_seen(tmp_path, 5500, shared) == 5000 + 3600


def test_the_store_setting_shares_the_first_call_between_processes(tmp_path: Path) -> None:
    sqlite = 'store = "sqlite"\n'
    assert switch_seen(tmp_path, 1000, "-", sqlite) == 1000 + 3600  # recorded
    assert switch_seen(tmp_path, 2000, "-", sqlite) == 1000 + 3600  # another process
    assert (tmp_path / "data" / "deadline.sqlite3").is_file()
    # The default ("client"): each process's Client counts from its own first call.
    assert switch_seen(tmp_path, 2500, "-") == 2500 + 3600
    assert switch_seen(tmp_path, 2500, "-", 'store = "client"\n') == 2500 + 3600
