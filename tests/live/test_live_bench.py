"""``modelplug bench`` against a real llama-server (gemma-3-270m): the shipped tasks run
end to end as a real process and the table comes out, whatever the small model manages
(it may fail every task, or be marked tool-less: the bench still ran). The table is
printed (``tox -e live`` runs with -s) so the figures can be read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

MODEL = "live/gemma-3-270m"


def test_bench_runs_the_shipped_tasks_against_llama_server(
    llama_server: str, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        "[providers.live]\n"
        'type = "openai-compatible"\n'
        f'base_url = "{llama_server}/v1"\n'
        'server = "llamacpp"\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
    env |= {"MODELPLUG_CONFIG": str(config), "MODELPLUG_DATA_DIR": str(tmp_path / "data")}
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "modelplug", "bench", "-m", MODEL, "--runs", "1", "--json"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    print(done.stderr)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    print(json.dumps(result, indent=2))
    assert result["model"] == MODEL and result["runs"] == 3 and result["local"]
    assert sorted(result["tasks"]) == ["fix_failing_test", "implement_stub", "rename_function"]
    assert result["tokens"] > 0
    assert result["cost_usd"] == "0"  # a local server: priced at 0 by core
