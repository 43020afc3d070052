"""Build, check and order every distribution for a release: the steps of release.yml.

    python tools/release.py build DIR            # sdist and wheel of core and every plugin
    python tools/release.py check DIR [--version X.Y.Z]
    python tools/release.py order [--levels | --verify]  # the publish order, a name a line
    python tools/release.py stage DIR OUT --levels N

``build`` runs ``python -m build`` (the sdist, then the wheel built from it, so a file
missing from the sdist breaks the wheel too) for core and every ``plugins/*`` directory:
nothing is listed by hand. Where hatchling is importable the builds skip isolation, so a
local run makes no environment per build; without it (the release workflow) each build
is isolated, the ecosystem's default.

``check`` runs ``twine check --strict`` on every file, then checks that every
distribution in the repository left exactly one sdist and one wheel named for it and its
version, and nothing else (with ``--version``, that version: the tag's).

``order`` is core first, then every plugin after each sibling it requires (in its
dependencies or in any extra, since ``pip install name[extra]`` needs those published
too). ``--levels`` prints the same as levels, one line each, the names separated by
spaces: a level needs only those before it. ``stage`` copies DIR's files into OUT/0,
OUT/1, ... by level for the workflow's publish jobs, one job a level, and refuses when
the graph has a different number of levels from the N jobs the workflow has.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Distribution:
    name: str
    version: str
    directory: Path
    requires: frozenset[str]  # every requirement's name, dependencies and extras alike

    @property
    def file_name(self) -> str:
        """The name as sdist and wheel file names spell it (PEP 625, PEP 491)."""
        return re.sub(r"[-_.]+", "_", self.name).lower()


def requirement_name(requirement: str) -> str:
    name = re.split(r"[<>=!~\[ ;@(]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def read(directory: Path) -> Distribution:
    project = tomllib.loads((directory / "pyproject.toml").read_text())["project"]
    requirements = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    return Distribution(
        name=requirement_name(project["name"]),
        version=project["version"],
        directory=directory,
        requires=frozenset(requirement_name(r) for r in requirements),
    )


def distributions(root: Path = ROOT) -> list[Distribution]:
    """Core and every plugin directory, found by globbing."""
    plugins = sorted(p.parent for p in (root / "plugins").glob("*/pyproject.toml"))
    return [read(root), *(read(p) for p in plugins)]


def levels(dists: list[Distribution]) -> list[list[Distribution]]:
    """Publish levels: each distribution one level above the highest sibling it needs.

    Core is level 0 alone (every plugin requires it); names within a level are sorted so
    the order is the same on every machine. A cycle among siblings is refused: no order
    could publish them with their requirements first.
    """
    by_name = {d.name: d for d in dists}
    level: dict[str, int] = {}

    def place(name: str, path: tuple[str, ...]) -> int:
        if name in path:
            cycle = " -> ".join((*path[path.index(name) :], name))
            raise SystemExit(f"release: the distributions require each other: {cycle}")
        if name not in level:
            needs = [r for r in by_name[name].requires if r in by_name and r != name]
            level[name] = 1 + max((place(r, (*path, name)) for r in needs), default=-1)
        return level[name]

    for dist in dists:
        place(dist.name, ())
    out: list[list[Distribution]] = [[] for _ in range(max(level.values()) + 1)]
    for dist in sorted(dists, key=lambda d: d.name):
        out[level[dist.name]].append(dist)
    return out


def order(dists: list[Distribution]) -> list[Distribution]:
    return [d for level in levels(dists) for d in level]


def out_of_order(sequence: list[Distribution]) -> list[str]:
    """Each distribution in ``sequence`` that comes before a sibling it requires, or
    before core; a check of an order that does not trust how it was made."""
    names = {d.name for d in sequence}
    seen: set[str] = set()
    problems = []
    for dist in sequence:
        missing = sorted(r for r in dist.requires & names - seen if r != dist.name)
        if missing:
            problems.append(f"{dist.name} comes before {', '.join(missing)}, which it requires")
        seen.add(dist.name)
    return problems


def run(command: list[str]) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.check_call(command)


def build(out: Path, dists: list[Distribution]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    # hatchling importable here: build against it instead of a fresh environment per
    # distribution (twenty-two of them, each installing hatchling from the index).
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-isolation"]
    for dist in dists:
        run([sys.executable, "-m", "build", *isolation, "--outdir", str(out), str(dist.directory)])


def expected_files(dist: Distribution, version: str | None = None) -> tuple[str, str]:
    stem = f"{dist.file_name}-{version or dist.version}"
    return f"{stem}.tar.gz", f"{stem}-py3-none-any.whl"


def misnamed(out: Path, dists: list[Distribution], version: str | None) -> list[str]:
    """What is wrong with DIR's files: a distribution's sdist or wheel missing, twice, or
    named for another version, and any file no distribution accounts for."""
    files = sorted(p.name for p in out.iterdir())
    problems = []
    accounted: set[str] = set()
    for dist in dists:
        sdist, wheel = expected_files(dist, version)
        # The dash ends the name: modelplug_openai- is not modelplug_openai_compat-.
        mine = [f for f in files if f.startswith(dist.file_name + "-")]
        accounted.update(mine)
        if sorted(mine) != sorted([sdist, wheel]):
            problems.append(f"{dist.name}: expected {sdist} and {wheel}, found {mine or 'none'}")
    problems += [
        f"{f}: no distribution in this repository makes it" for f in files if f not in accounted
    ]
    return problems


def check(out: Path, dists: list[Distribution], version: str | None) -> int:
    files = sorted(str(p) for p in out.iterdir()) if out.is_dir() else []
    if not files:
        print(f"release: {out} is empty: run `build {out}` first", file=sys.stderr)
        return 1
    # The names first: a wrong version or a missing wheel says so without twine.
    problems = misnamed(out, dists, version)
    for problem in problems:
        print(f"release: {problem}", file=sys.stderr)
    if problems:
        return 1
    if importlib.util.find_spec("twine") is None:
        print("release: twine is not installed here (pip install twine)", file=sys.stderr)
        return 1
    run([sys.executable, "-m", "twine", "check", "--strict", *files])
    print(f"release: {len(dists)} distributions, one sdist and one wheel each")
    return 0


def stage(out: Path, into: Path, dists: list[Distribution], expected_levels: int) -> int:
    grouped = levels(dists)
    if len(grouped) != expected_levels:
        print(
            f"release: the distributions need {len(grouped)} publish levels and the "
            f"workflow has {expected_levels} publish jobs: give release.yml one job a level",
            file=sys.stderr,
        )
        return 1
    for number, level in enumerate(grouped):
        target = into / str(number)
        target.mkdir(parents=True, exist_ok=True)
        for dist in level:
            for name in expected_files(dist):
                shutil.copy2(out / name, target / name)
        print(f"level {number}: {' '.join(d.name for d in level)}", file=sys.stderr)
    return 0


def command(args: argparse.Namespace, dists: list[Distribution]) -> int:
    if args.command == "build":
        build(args.dir, dists)
        return 0
    if args.command == "check":
        return check(args.dir, dists, args.version)
    if args.command == "stage":
        return stage(args.dir, args.out, dists, args.levels)
    if args.verify:
        problems = out_of_order(order(dists))
        for problem in problems:
            print(f"release: {problem}", file=sys.stderr)
        if not problems:
            print(f"release: {len(dists)} distributions, each after what it requires")
        return 1 if problems else 0
    if args.levels:
        for level in levels(dists):
            print(" ".join(d.name for d in level))
    else:
        for dist in order(dists):
            print(dist.name)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("build", help="sdist and wheel of every distribution").add_argument(
        "dir", type=Path
    )
    checking = commands.add_parser("check", help="twine check --strict, and the file names")
    checking.add_argument("dir", type=Path)
    checking.add_argument("--version", help="the version every file must have (the tag's)")
    ordering = commands.add_parser("order", help="print the publish order")
    ordering.add_argument("--levels", action="store_true", help="one level a line")
    ordering.add_argument(
        "--verify", action="store_true", help="exit 1 unless each comes after what it requires"
    )
    staging = commands.add_parser("stage", help="copy DIR's files into OUT/<level>/")
    staging.add_argument("dir", type=Path)
    staging.add_argument("out", type=Path)
    staging.add_argument("--levels", type=int, required=True, help="the workflow's job count")
    args = parser.parse_args(argv)

    dists = distributions()
    try:
        return command(args, dists)
    except subprocess.CalledProcessError as error:
        print(f"release: {error.cmd[2]} failed (exit {error.returncode})", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
