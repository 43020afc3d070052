"""Run mypy on core and on each plugin's source (each its own package root)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    targets = [str(ROOT / "core" / "modelplug")]
    targets += [str(p) for p in sorted((ROOT / "plugins").glob("*/src/*")) if p.is_dir()]
    return subprocess.call([sys.executable, "-m", "mypy", *targets])


if __name__ == "__main__":
    raise SystemExit(main())
