"""Build every distribution and run each plugin's tests from its own sdist.

For each plugin: build core's and the plugin's sdists (``python -m build``), make a
fresh environment with only those two (and the plugin's ``test`` extra), unpack the
plugin's sdist and run its tests there. A test that leans on a fixture living only in
the repository (the root conftest.py, another plugin's tests) fails here, as it would
for anyone who downloads the sdist. Core's wheel is built too, and both archives are
checked for their LICENSE.

    python .ci/sdist_tests.py [plugin-name ...]
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(command: list[str], cwd: Path | None = None) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.check_call(command, cwd=cwd)


def build(project: Path, out: Path, *kinds: str) -> list[Path]:
    before = set(out.iterdir())
    # No isolation: hatchling is installed once in this environment, not per build.
    run(
        [
            sys.executable,
            "-m",
            "build",
            "--no-isolation",
            *kinds,
            "--outdir",
            str(out),
            str(project),
        ]
    )
    return sorted(set(out.iterdir()) - before)


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


def siblings(plugin: Path, plugins: dict[str, Path]) -> set[str]:
    """The repository's plugins that ``plugin`` needs (dependencies and test extra),
    and theirs: they are installed from their own sdists, never from an index."""
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


def test_plugin(plugin: Path, core_sdist: Path, sdists: dict[str, Path], work: Path) -> None:
    sdist = sdists[plugin.name]
    check_license(sdist)
    source = unpack(sdist, work / f"src-{plugin.name}")
    env = work / f"venv-{plugin.name}"
    run([sys.executable, "-m", "uv", "venv", "--quiet", "--python", sys.executable, str(env)])
    python = env / "bin" / "python"
    dirs = {name: ROOT / "plugins" / name for name in sdists}
    needed = sorted(str(sdists[name]) for name in siblings(plugin, dirs))
    run(
        [
            sys.executable,
            "-m",
            "uv",
            "pip",
            "install",
            "--quiet",
            "--python",
            str(python),
            str(core_sdist),
            *needed,
            f"{sdist}[test]",
        ]
    )
    run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=source)


def main(argv: list[str]) -> int:
    plugins = sorted(p.parent for p in (ROOT / "plugins").glob("*/pyproject.toml"))
    if argv:
        plugins = [
            p for p in plugins if p.name in argv or p.name.removeprefix("modelplug-") in argv
        ]
    with tempfile.TemporaryDirectory(prefix="modelplug-sdists-") as tmp:
        work = Path(tmp)
        core = build(ROOT, work, "--sdist", "--wheel")
        for archive in core:
            check_license(archive)
        (core_sdist,) = [p for p in core if p.suffix == ".gz"]
        every = sorted(p.parent for p in (ROOT / "plugins").glob("*/pyproject.toml"))
        sdists = {p.name: build(p, work, "--sdist")[0] for p in every}
        failed = []
        for plugin in plugins:
            print(f"== {plugin.name}: tests from its sdist", flush=True)
            try:
                test_plugin(plugin, core_sdist, sdists, work)
            except subprocess.CalledProcessError:
                failed.append(plugin.name)
    if failed:
        print(f"sdist tests failed for: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"sdist tests passed for {len(plugins)} plugins")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
