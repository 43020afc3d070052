"""``modelplug cooldowns`` sees and clears the cooldowns other processes set: one real
process's call meets 429s on a/m and b/m and falls back to c/m (both now cool down in
this machine's SQLite file, as they would for an hour); the command, run as a user runs
it in another process, lists them with their remaining seconds and the store, clears
one by name and then all; the next process's call asks a/m again."""

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
models = {
    name: FakeModel(
        [RateLimited("Too Many Requests") if name in spec["fail"] else text("from " + name)],
        provider=name,
    )
    for name in ("a", "b", "c")
}
config = {
    "fallbacks": {"a/m": ["b/m", "c/m"]},
    "fallback": {"retries": 0, "cooldown_rate_limit": 3600},
}
client = Client(plugins=list(models.values()), enable=["modelplug-fallback"], config=config)
answer = client.complete("a/m", "hi", on_event=lambda e: None)
print(json.dumps({"text": answer.text, "asked": {k: len(m.requests) for k, m in models.items()}}))
"""


class Machine:
    """One user's environment: a settings file with nothing in it (the default store:
    the SQLite file in the data directory), and processes run in it."""

    def __init__(self, home: Path) -> None:
        (home / "config.toml").write_text("")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
        self.env["MODELPLUG_CONFIG"] = str(home / "config.toml")
        self.env["MODELPLUG_DATA_DIR"] = str(home / "data")
        self.home = home

    def call(self, *, fail: list[str]) -> dict[str, Any]:
        done = self.run("-c", WORKER, json.dumps({"fail": fail}))
        result: dict[str, Any] = json.loads(done.strip().splitlines()[-1])
        return result

    def modelplug(self, *args: str) -> str:
        return self.run("-m", "modelplug", *args)

    def run(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, *args],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.home,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout


def listed(machine: Machine) -> dict[str, float]:
    data = json.loads(machine.modelplug("cooldowns", "--json"))
    assert data["store"] == "SqliteCooldowns"
    assert data["where"].startswith(str(machine.home / "data" / "cooldowns.sqlite3"))
    return {row["route"]: row["remaining"] for row in data["cooldowns"]}


def test_modelplug_cooldowns_lists_what_another_process_cooled_down(tmp_path: Path) -> None:
    machine = Machine(tmp_path)
    assert machine.call(fail=["a", "b"])["text"] == "from c"

    shown = listed(machine)
    text = machine.modelplug("cooldowns")

    assert sorted(shown) == ["a/m", "b/m"]
    assert all(3000 < left <= 3600 for left in shown.values())  # an hour, minus this test
    lines = text.splitlines()
    assert lines[0].startswith("a/m") and "cooling down for" in lines[0]
    assert lines[1].startswith("b/m") and lines[1].endswith("s more")
    assert lines[-1].startswith("store: SqliteCooldowns (") and str(tmp_path) in lines[-1]


def test_modelplug_cooldowns_clear_forgets_one_then_all_for_every_process(
    tmp_path: Path,
) -> None:
    machine = Machine(tmp_path)
    machine.call(fail=["a", "b"])

    one = machine.modelplug("cooldowns", "clear", "a/m")
    after_one = listed(machine)
    again = machine.modelplug("cooldowns", "clear", "a/m")
    machine.call(fail=["a", "b"])  # both cool down again
    everything = machine.modelplug("cooldowns", "clear")
    after_all = listed(machine)
    nothing = machine.modelplug("cooldowns", "clear")
    next_call = machine.call(fail=[])

    assert one.splitlines()[0] == "cleared: a/m"
    assert list(after_one) == ["b/m"]
    assert again.splitlines()[0] == "a/m was not cooling down"
    assert everything.splitlines()[0] == "cleared: a/m, b/m"
    assert after_all == {}
    assert nothing.splitlines()[0] == "nothing was cooling down"
    # Cleared in the file every process reads: the next process asks a/m again.
    assert next_call == {"text": "from a", "asked": {"a": 1, "b": 0, "c": 0}}


def test_modelplug_cooldowns_clear_takes_an_alias_for_the_model_it_names(
    tmp_path: Path,
) -> None:
    machine = Machine(tmp_path)
    # Core's own echo provider: this plugin's tests run from its sdist beside core only.
    (tmp_path / "config.toml").write_text('[aliases]\nfirst = "echo/m"\n')
    # Marked by another process, as the policy marks it: by the route's name.
    machine.run(
        "-c",
        "import sys; from pathlib import Path; "
        "from modelplug_fallback import SqliteCooldowns; "
        "SqliteCooldowns(Path(sys.argv[1])).mark_now('echo/m', 3600)",
        str(tmp_path / "data" / "cooldowns.sqlite3"),
    )
    assert list(listed(machine)) == ["echo/m"]

    cleared = json.loads(machine.modelplug("cooldowns", "clear", "first", "--json"))

    assert cleared["cleared"] == ["echo/m"]
    assert listed(machine) == {}
