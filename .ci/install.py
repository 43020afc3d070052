"""Set up modelplug for development: a virtual environment with core and every plugin.

    python3 .ci/install.py            # make or refresh .venv/ at the repository root
    python .ci/install.py --here      # install into the running Python (what tox does)

``--here --newest`` asks the index again for every dependency and takes the newest
release our ranges allow (never a cached resolution), then prints the versions of the
libraries whose public API we build on: tox's ``newest`` env, so a release that breaks
us shows in CI before users see it.

Without ``--here`` it creates ``.venv/`` (so Debian's externally managed Python is never
touched), installs core and every plugin under ``plugins/`` editable with their test
extras, and the tools the README's commands use (tox, build, uv). Adding a plugin
directory is all it takes for its tests to run: no list of plugins is kept by hand.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
TOOLS = ["tox>=4.11", "tox-uv>=1.11", "build>=1.2", "uv>=0.4"]


def targets() -> list[str]:
    """Core and every plugin, editable, each with its test extra."""
    out = ["-e", f"{ROOT}[test]"]
    for plugin in sorted((ROOT / "plugins").glob("*/pyproject.toml")):
        out += ["-e", f"{plugin.parent}[test]"]
    return out


# The libraries whose public API core and the plugins build on (issue: "CI against the
# newest releases too").
WATCHED = [
    "httpx2",
    "httpcore2",
    "uvicorn",
    "granian",
    "redis",
    "hiredis",
    "pluggy",
    "pydantic",
    "anthropic",
    "openai",
    "botocore",
    "genai-prices",
    "opentelemetry-api",
]


def pip_install(python: Path | str, packages: list[str], *, newest: bool = False) -> int:
    print("installing:", " ".join(p for p in packages if p != "-e"), flush=True)
    uv = VENV / "bin" / "uv"
    if uv.exists() and Path(python) != VENV / "bin" / "python":
        # tox's environments: uv from .venv installs in seconds what pip takes a minute for.
        fresh = ["--upgrade", "--refresh"] if newest else []
        return subprocess.call(
            [str(uv), "pip", "install", "--quiet", *fresh, "--python", str(python), *packages]
        )
    fresh = ["--upgrade", "--upgrade-strategy", "eager", "--no-cache-dir"] if newest else []
    return subprocess.call([str(python), "-m", "pip", "install", "--quiet", *fresh, *packages])


def print_versions() -> None:
    from importlib import metadata

    found = []
    for name in WATCHED:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} (not installed)")
    print("newest releases under test:", ", ".join(found), flush=True)


def ensure_pip(python: Path | str) -> None:
    """Environments made by uv (tox-uv) come without pip; Python bundles one."""
    probe = [str(python), "-c", "import pip"]
    if subprocess.call(probe, stderr=subprocess.DEVNULL) != 0:
        subprocess.check_call([str(python), "-m", "ensurepip", "--default-pip"])


def make_venv() -> Path:
    python = VENV / "bin" / "python"
    if not python.exists():
        if importlib.util.find_spec("ensurepip") is None:
            raise SystemExit(
                "modelplug: this Python cannot make virtual environments (ensurepip is "
                "missing); on Debian or Ubuntu run `apt-get install python3-venv`, then "
                "run this command again"
            )
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    return python


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--here", action="store_true", help="install into this Python")
    parser.add_argument(
        "--newest",
        action="store_true",
        help="with --here: the newest release of every dependency our ranges allow",
    )
    args = parser.parse_args(argv)
    if args.here:
        if not (VENV / "bin" / "uv").exists():
            ensure_pip(sys.executable)
        status = pip_install(sys.executable, targets(), newest=args.newest)
        if args.newest and status == 0:
            print_versions()
        return status
    python = make_venv()
    status = pip_install(python, ["--upgrade", "pip", *TOOLS])
    status = status or pip_install(python, targets())
    if status == 0:
        print(
            f"modelplug is installed in {VENV}: run `.venv/bin/modelplug ...` and "
            "`.venv/bin/tox`, or `source .venv/bin/activate` first",
            flush=True,
        )
    return status


if __name__ == "__main__":
    raise SystemExit(main())
