"""Run each plugin's tests from its own sdist, beside core and the siblings it needs.

Every distribution is built once, as the release builds it (``tools/release.py build``:
the sdist, then the wheel from that sdist). ``--dist DIR`` reuses the files the
``release`` env built there when every one is present and newer than its sources (tox
runs ``release`` first); otherwise they are built here. For each plugin: a fresh
environment with core's wheel, the wheels of the siblings it needs and its own wheel with
its ``test`` extra, never anything else from the repository; its sdist unpacked, and its
tests run there. A test that leans on a fixture living only in the repository (the root
conftest.py, another plugin's tests) fails here, as it would for anyone who downloads the
sdist. Every archive is checked for its LICENSE.

Plugins run side by side, one per CPU, the largest first; each one's output is printed
whole when it ends, then a line per plugin with its time.

    python .ci/sdist_tests.py [--dist DIR] [plugin-name ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import zipfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# Written by tools, caches and test runs inside a project directory: not sources.
NOT_SOURCES = {"__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache"}


def load_release() -> ModuleType:
    """tools/release.py, the release workflow's own build (not a package: by path)."""
    spec = importlib.util.spec_from_file_location("release", ROOT / "tools" / "release.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["release"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


release = load_release()


def run(command: list[str], cwd: Path | None = None) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.check_call(command, cwd=cwd)


def check_license(archive: Path) -> None:
    if archive.suffix == ".whl":
        names = zipfile.ZipFile(archive).namelist()
    else:
        with tarfile.open(archive) as tar:
            names = tar.getnames()
    if not any(Path(n).name.startswith("LICENSE") for n in names):
        raise SystemExit(f"{archive.name} has no LICENSE file")


def unpack(sdist: Path, into: Path) -> Path:
    with tarfile.open(sdist) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:  # Python before 3.11.4 (Debian 12's 3.11.2) has no extraction filters
            tar.extractall(into)  # our own sdist, built a moment ago
    (folder,) = [p for p in into.iterdir() if p.is_dir()]
    return folder


def sources(directory: Path) -> list[Path]:
    """The files a distribution is built from: core's are its sdist's include list (the
    root holds tests and tools too), a plugin's are its whole directory."""
    if directory == ROOT:
        hatch = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]
        roots = [ROOT / "pyproject.toml"]
        roots += [ROOT / p for p in hatch["build"]["targets"]["sdist"]["include"]]
    else:
        roots = [directory]
    found = []
    for top in roots:
        if top.is_file():
            found.append(top)
            continue
        for folder, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d not in NOT_SOURCES and not d.endswith(".egg-info")]
            found += [Path(folder) / f for f in files]
    return found


def built_from_these_sources(dist_dir: Path, dists: list[Any]) -> bool:
    """Whether DIR holds every distribution's sdist and wheel, each newer than every
    one of its sources: a file built before an edit must not be tested in its place."""
    for dist in dists:
        archives = [dist_dir / name for name in release.expected_files(dist)]
        if not all(a.is_file() for a in archives):
            return False
        built = min(a.stat().st_mtime for a in archives)
        if any(s.stat().st_mtime > built for s in sources(dist.directory)):
            return False
    return True


def siblings(plugin: Path, plugins: dict[str, Path]) -> set[str]:
    """The repository's plugins that ``plugin`` needs (dependencies and test extra),
    and theirs: they are installed from their own builds, never from an index."""
    needed: set[str] = set()
    todo = [plugin]
    while todo:
        project = tomllib.loads((todo.pop() / "pyproject.toml").read_text())["project"]
        requirements = list(project.get("dependencies", []))
        requirements += project.get("optional-dependencies", {}).get("test", [])
        for requirement in requirements:
            name = re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0]
            if name in plugins and name not in needed:
                needed.add(name)
                todo.append(plugins[name])
    needed.discard(plugin.name)
    return needed


@dataclass
class Outcome:
    plugin: str
    passed: bool
    seconds: float
    output: str


def run_plugin_tests(plugin: Path, dist_dir: Path, work: Path) -> Outcome:
    """Install and test one plugin; its output is kept, to be printed whole."""
    started = time.monotonic()
    files = {d.directory.name: release.expected_files(d) for d in release.distributions()}
    sdist, wheel = (dist_dir / name for name in files[plugin.name])
    core_wheel = dist_dir / files[ROOT.name][1]
    plugins = {p.name: p for p in (ROOT / "plugins").glob("*") if p.name in files}
    needed = sorted(str(dist_dir / files[name][1]) for name in siblings(plugin, plugins))
    source = unpack(sdist, work / f"src-{plugin.name}")
    env = work / f"venv-{plugin.name}"
    python = env / "bin" / "python"
    name = re.sub(r"[-_.]+", "-", plugin.name)
    uv = [sys.executable, "-m", "uv"]
    install = [str(core_wheel), *needed, f"{name}[test] @ {wheel.as_uri()}"]
    steps = [
        [*uv, "venv", "--quiet", "--python", sys.executable, str(env)],
        [*uv, "pip", "install", "--quiet", "--python", str(python), *install],
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
    ]
    output = []
    for command in steps:
        output.append("+ " + " ".join(command) + "\n")
        done = subprocess.run(
            command,
            cwd=source,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
        )
        output.append(done.stdout)
        if done.returncode != 0:
            return Outcome(plugin.name, False, time.monotonic() - started, "".join(output))
    return Outcome(plugin.name, True, time.monotonic() - started, "".join(output))


def tests_size(plugin: Path) -> int:
    """The bytes of a plugin's tests: the order to start them in, largest first, so that
    the last one to start is a short one."""
    return sum(p.stat().st_size for p in (plugin / "tests").rglob("*") if p.is_file())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dist", type=Path, help="the release env's builds, reused if current")
    parser.add_argument("plugins", nargs="*", help="only these plugins (name or short name)")
    args = parser.parse_args(argv)
    every = sorted(p.parent for p in (ROOT / "plugins").glob("*/pyproject.toml"))
    wanted = set(args.plugins)
    chosen = [
        p for p in every if not wanted or {p.name, p.name.removeprefix("modelplug-")} & wanted
    ]
    dists = release.distributions()
    with tempfile.TemporaryDirectory(prefix="modelplug-sdists-") as tmp:
        work = Path(tmp)
        if args.dist is not None and built_from_these_sources(args.dist, dists):
            dist_dir = args.dist
            print(f"sdist tests: the builds in {dist_dir} are current: reusing them", flush=True)
        else:
            dist_dir = work / "dist"
            release.build(dist_dir, dists)
        for archive in sorted(dist_dir.iterdir()):
            check_license(archive)
        lanes = os.cpu_count() or 1
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=lanes) as pool:
            running = [
                pool.submit(run_plugin_tests, plugin, dist_dir, work)
                for plugin in sorted(chosen, key=tests_size, reverse=True)
            ]
            outcomes = []
            for future in as_completed(running):
                outcome = future.result()
                print(f"== {outcome.plugin}: tests from its sdist", flush=True)
                print(outcome.output, end="", flush=True)
                outcomes.append(outcome)
    print(f"sdist tests, {lanes} at a time, {time.monotonic() - started:.0f} s in all:")
    for outcome in sorted(outcomes, key=lambda o: o.plugin):
        verdict = "passed" if outcome.passed else "FAILED"
        print(f"  {outcome.plugin}: {verdict} in {outcome.seconds:.0f} s")
    failed = [o.plugin for o in outcomes if not o.passed]
    if failed:
        print(f"sdist tests failed for: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"sdist tests passed for {len(outcomes)} plugins")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
