"""Counting a command's instructions under valgrind's callgrind, for the benchmarks that
need a measure a busy machine cannot disturb (startup, stream, textcalls)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence

__all__ = ["count_instructions", "have_valgrind"]


def have_valgrind() -> bool:
    return shutil.which("valgrind") is not None


def count_instructions(
    command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None
) -> int:
    """Instructions ``command`` executes (one run). Without ``env``: this environment,
    with MODELPLUG_CONFIG pointing at a file that does not exist."""
    with tempfile.TemporaryDirectory() as scratch:
        environ = (
            dict(env)
            if env is not None
            else {**os.environ, "MODELPLUG_CONFIG": os.path.join(scratch, "none.toml")}
        )
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out", *command],
            capture_output=True,
            text=True,
            env=environ,
            cwd=cwd if cwd is not None else scratch,
            check=True,
        )
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no count for {command}:\n{out.stderr[-2000:]}")
    return int(found.group(1))
