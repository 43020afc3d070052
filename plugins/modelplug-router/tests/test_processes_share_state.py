"""Two real processes on this machine's SQLite state file balance as one: a deployment's
rpm window and its calls in flight count every process's calls; ``modelplug resolve
GROUP`` (a third process) shows each deployment's state, in text and in JSON. The
deployments are openai-compatible servers on loopback (the test kit's WireServer)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from modelplug_kit.testing import WireServer

pytest.importorskip("modelplug_openai_compat", reason="the deployments are served through it")

RECORDING = Path(__file__).parent / "recordings" / "chat_ok.sse"
BODY = b"".join(
    line for line in RECORDING.read_bytes().splitlines(True) if not line.startswith(b"#")
)

USER_FILE = """
[plugins]
enable = ["modelplug-openai-compat", "modelplug-router"]

[providers.east]
type = "openai-compatible"
base_url = "{east}/v1"

[providers.west]
type = "openai-compatible"
base_url = "{west}/v1"

[groups.g]
deployments = [
    {{ spec = "east/m", rpm = {rpm}, max_parallel = 1, weight = 100 }},
    {{ spec = "west/m", rpm = {rpm} }},
]
"""

WORKER = r"""
import json, sys
from modelplug import Client, ModelplugError

client = Client()
if len(sys.argv) > 2:  # started early: wait for the word (imports and settings done)
    print("ready", flush=True)
    sys.stdin.readline()
out = []
for _ in range(int(sys.argv[1])):
    try:
        out.append(client.complete("g", "hi").model)
    except ModelplugError as exc:
        out.append(getattr(exc, "kind", type(exc).__name__ + ": " + str(exc)))
client.close()
print(json.dumps(out))
"""


@pytest.fixture
def servers() -> Iterator[tuple[WireServer, WireServer]]:
    east, west = WireServer().start(), WireServer().start()
    yield east, west
    east.stop()
    west.stop()


def environment(tmp_path: Path, east: WireServer, west: WireServer, rpm: int) -> dict[str, str]:
    user = tmp_path / "config.toml"
    user.write_text(USER_FILE.format(east=east.url, west=west.url, rpm=rpm))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
    env["MODELPLUG_CONFIG"] = str(user)
    env["MODELPLUG_DATA_DIR"] = str(tmp_path / "data")
    return env


def start(
    env: dict[str, str], calls: int, cwd: Path, *, on_word: bool = False
) -> subprocess.Popen[str]:
    """A worker making ``calls`` calls; ``on_word``: once it says ``ready`` and is told
    to go (:func:`go`)."""
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, str(calls), *(["on-word"] if on_word else [])],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )


def go(process: subprocess.Popen[str]) -> None:
    assert process.stdout is not None and process.stdin is not None
    assert process.stdout.readline().strip() == "ready"
    process.stdin.write("go\n")
    process.stdin.flush()


def results(process: subprocess.Popen[str]) -> list[str]:
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    answer: list[str] = json.loads(stdout.strip().splitlines()[-1])
    return answer


def test_two_processes_share_the_rpm_windows(
    tmp_path: Path, servers: tuple[WireServer, WireServer]
) -> None:
    east, west = servers
    for _ in range(8):
        east.add(BODY)
        west.add(BODY)
    env = environment(tmp_path, east, west, rpm=3)
    first, second = start(env, 4, tmp_path), start(env, 4, tmp_path)
    both = Counter(results(first) + results(second))
    # Three calls a minute each, all processes together: six answered, two refused.
    assert both == {"east/m": 3, "west/m": 3, "rate_limit": 2}
    assert (len(east.requests), len(west.requests)) == (3, 3)

    shown = subprocess.run(
        [sys.executable, "-m", "modelplug", "resolve", "g"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert "group g: strategy weighted, store SqliteCounters(" in shown.stdout
    assert "east/m: weight 100, in flight 0/1, latency " in shown.stdout
    assert "rpm 3/3" in shown.stdout and "free" in shown.stdout

    as_json = subprocess.run(
        [sys.executable, "-m", "modelplug", "resolve", "g", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert as_json.returncode == 0, as_json.stderr
    section = json.loads(as_json.stdout)["policies"]["router"]
    assert section["group"] == "g" and section["store"] == "SqliteCounters"
    east_state, west_state = section["deployments"]
    assert (east_state["spec"], east_state["rpm_used"], east_state["rpm"]) == ("east/m", 3, 3)
    assert (west_state["in_flight"], west_state["cooldown_s"]) == (0, 0)
    assert isinstance(west_state["latency_ms"], int)


def test_a_call_in_flight_in_one_process_fills_the_deployment_for_another(
    tmp_path: Path, servers: tuple[WireServer, WireServer]
) -> None:
    east, west = servers
    east.add(BODY, stall=5.0)  # the first process's call stays in flight on east
    west.add(BODY)
    env = environment(tmp_path, east, west, rpm=100)
    holding = start(env, 1, tmp_path, on_word=True)
    other = start(env, 1, tmp_path, on_word=True)
    go(holding)
    deadline = time.monotonic() + 60
    while not east.requests:
        if holding.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"the first call never reached east: {holding.communicate()}")
        time.sleep(0.02)
    # east (weight 100, max_parallel 1) is full: the other process's call goes west.
    go(other)
    assert results(other) == ["west/m"]
    assert results(holding) == ["east/m"]
    assert len(east.requests) == 1
