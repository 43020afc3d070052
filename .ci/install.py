"""Install core and every plugin under plugins/ (editable) into the running Python.

tox runs this before the tests so that adding a plugin directory is all it takes for
its tests to run; no list of plugins is kept by hand.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    targets = ["-e", str(ROOT)]
    for plugin in sorted((ROOT / "plugins").glob("*/pyproject.toml")):
        targets += ["-e", str(plugin.parent)]
    if importlib.util.find_spec("pip") is None:
        # Environments made by uv (tox-uv) come without pip; Python bundles one.
        subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"])
    command = [sys.executable, "-m", "pip", "install", "--quiet", *targets]
    print("installing:", " ".join(t for t in targets if t != "-e"), flush=True)
    return subprocess.call(command)


if __name__ == "__main__":
    raise SystemExit(main())
