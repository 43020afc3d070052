"""A deadline name resolves without anything heavy: no pydantic, no httpx2, no vendor
SDK until a call runs (core's rule for ``Client()`` + ``resolve()``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("pydantic", "httpx2", "httpx", "anthropic", "openai", "genai_prices")


def test_resolving_a_deadline_name_loads_no_heavy_module(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[deadlines.nightly]\nslow = "anthropic-batch/claude-sonnet-4-6"\n'
        'fast = "anthropic/claude-sonnet-4-6"\nstep_limit = "20m"\n'
    )
    script = (
        "import sys, json, modelplug\n"
        "c = modelplug.Client()\n"
        "assert c.resolve('nightly').name == 'deadline/nightly'\n"
        "c.resolve('anthropic/claude-sonnet-4-6')\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            "MODELPLUG_CONFIG": str(config),
            "MODELPLUG_DATA_DIR": str(tmp_path / "data"),
            "PATH": "/usr/bin:/bin",
        },
        check=True,
    )
    modules = set(json.loads(result.stdout.strip().splitlines()[-1]))
    assert "modelplug_deadline.policy" in modules  # the deadline name was resolved here
    assert sorted(m for m in modules if m.split(".")[0] in HEAVY) == []
