"""The import rules hold: ``lint-imports`` keeps every contract of ``.importlinter``
(core's rooms import one way, no circle inside any package, the kit never imports the
client, plugins and the kit import core by its top-level package only). tox's lint env
runs the same command; this test makes the plain test run enforce it too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_lint_imports_keeps_every_contract() -> None:
    pytest.importorskip("importlinter", reason="import-linter is not installed")
    # The console script of the Python running the tests, so it sees the same packages.
    command = Path(sys.executable).with_name("lint-imports")
    assert command.is_file(), f"import-linter is installed but {command} is missing"

    run = subprocess.run(
        [str(command), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    output = run.stdout + run.stderr
    assert run.returncode == 0, f"lint-imports failed (exit {run.returncode}):\n{output}"
    assert "BROKEN" not in output, output
