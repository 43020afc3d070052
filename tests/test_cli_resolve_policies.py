"""``modelplug resolve`` shows what the policies would do with a call on the route now
(each plugin's ``modelplug_describe_route``): the fallback chain and what in it cools
down, the budgets and rate limits that count the call and their use, and where each
keeps its state. Here a first ``modelplug chat`` meets a 429 from lab/m and falls back;
a second process, ``modelplug resolve``, shows lab/m cooling down from it. Both are
real subprocesses against the test kit's loopback server; they share the data dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from modelplug_kit.testing import WireServer

pytest.importorskip("modelplug_openai_compat", reason="the providers are openai-compatible")
pytest.importorskip("modelplug_fallback", reason="its section is shown")
pytest.importorskip("modelplug_limits", reason="its section is shown")

RECORDING = Path(__file__).parent / "recordings" / "chat_text.sse"
RATE_LIMIT_BODY = {"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded"}}

USER_FILE = """
[providers.lab]
type = "openai-compatible"
base_url = "{url}/v1"

[providers.spare]
type = "openai-compatible"
base_url = "{url}/v1"

[fallbacks]
"lab/m" = ["spare/m"]

[fallback]
retries = 0

[limits."lab/m"]
rpm = 30
window = 3600

[limits.budgets.daily]
tokens = 100000
period = "day"
"""


def modelplug(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
    env["MODELPLUG_CONFIG"] = str(tmp_path / "config.toml")
    env["MODELPLUG_DATA_DIR"] = str(tmp_path / "data")
    return subprocess.run(
        [sys.executable, "-m", "modelplug", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )


def test_resolve_shows_a_cooldown_another_process_set_and_the_limits(
    tmp_path: Path, wire_server: WireServer
) -> None:
    (tmp_path / "config.toml").write_text(USER_FILE.format(url=wire_server.url))
    # The rate is counted in fixed windows (now // window): the chat and both resolves (a
    # few seconds on a loaded machine) must read the same one. An hour's window is left
    # only in its last half minute, where this waits for the next (a 60 s window had
    # this test wait up to 30 s, every other run).
    if time.time() % 3600 > 3570:
        time.sleep(3600 - time.time() % 3600)
    # lab/m: come back in an hour (past max_retry_after: no wait, a cooldown that long).
    wire_server.add_json(RATE_LIMIT_BODY, status=429, headers={"retry-after": "3600"})
    wire_server.add_file(RECORDING)  # spare/m answers
    chat = modelplug(tmp_path, "chat", "-m", "lab/m", "hi")
    assert chat.returncode == 0, chat.stderr
    assert [r.json()["model"] for r in wire_server.requests] == ["m", "m"]  # lab, spare

    shown = modelplug(tmp_path, "resolve", "lab/m")
    as_json = modelplug(tmp_path, "resolve", "lab/m", "--json")

    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    fallback = lines.index("  fallback:")
    assert lines[fallback + 1] == '    chain: lab/m -> spare/m (from [fallbacks] "lab/m")'
    assert lines[fallback + 2].startswith("    cooling down: lab/m for ")
    assert lines[fallback + 2].endswith(" s more, so a call starts further down the chain")
    limits = lines.index("  limits:")
    assert lines[limits + 1].startswith("    budget daily (tokens, per day, all): spent ")
    assert lines[limits + 2].startswith("    rate lab/m (requests): 1 of 30 per 3600 s")
    assert f"store: SqliteCounters ({tmp_path / 'data' / 'limits.sqlite3'}" in shown.stdout

    policies = json.loads(as_json.stdout)["policies"]
    assert sorted(policies) == ["fallback", "limits"]
    cooling = {entry["model"]: entry["cooling"] for entry in policies["fallback"]["chain"]}
    # What the server asked for, not the 60 s cooldown_rate_limit.
    assert 60 < cooling["lab/m"] <= 3600 and cooling["spare/m"] == 0
    assert policies["fallback"]["store"] == "SqliteCooldowns"
    rows = {(row["kind"], row["name"]): row for row in policies["limits"]["limits"]}
    assert rows[("rate", "lab/m")]["used"] == 1
    assert "lines" not in policies["fallback"]  # the data, not the text


def test_resolve_without_policies_installed_shows_only_the_route(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from modelplug.cli import main

    (modelplug_config_dir / "config.toml").write_text(
        '[plugins]\ndisable = ["fallback", "limits"]\n'
    )

    assert main(["resolve", "echo", "--json"]) == 0

    assert json.loads(capsys.readouterr().out)["policies"] == {}
