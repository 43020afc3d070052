"""Run ``mypy --strict`` on the installed packages: core and every plugin.

The packages are named (``-p modelplug -p modelplug_anthropic ...``) rather than their
source paths, so mypy sees them as a plugin author's checker does, through the
installed distributions and their py.typed markers. Runs from outside the repository
so that nothing resolves through the working tree by accident.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def packages() -> list[str]:
    names = ["modelplug"]
    names += sorted(p.name for p in ROOT.glob("plugins/*/src/*") if (p / "__init__.py").exists())
    return names


def main() -> int:
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")]
    for name in packages():
        command += ["-p", name]
    with tempfile.TemporaryDirectory() as elsewhere:
        return subprocess.call(command, cwd=elsewhere)


if __name__ == "__main__":
    raise SystemExit(main())
