"""Every distribution stands on its own: its licence and type marker, its declared
imports, a compatible range on core, a test extra, and a README that renders alone."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
CORE = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
PLUGINS = sorted(p.parent for p in ROOT.glob("plugins/*/pyproject.toml"))
# (project dir, package sources) for core and each plugin.
DISTRIBUTIONS = [(ROOT, ROOT / "core" / "modelplug")] + [
    (p, next((p / "src").iterdir())) for p in PLUGINS
]


def project(directory: Path) -> dict:  # type: ignore[type-arg]
    return tomllib.loads((directory / "pyproject.toml").read_text())["project"]


def imported_top_names(package: Path) -> set[str]:
    names: set[str] = set()
    for path in package.rglob("*.py"):
        if "template" in path.relative_to(package).parts:
            continue  # core's plugin template is data: its imports are the new plugin's
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return names


def declared(directory: Path) -> set[str]:
    meta = project(directory)
    requirements = list(meta.get("dependencies", []))
    for extra in meta.get("optional-dependencies", {}).values():
        requirements += extra
    return {Requirement(r).name.lower().replace("_", "-") for r in requirements}


@pytest.mark.parametrize("directory", [d for d, _ in DISTRIBUTIONS], ids=lambda d: d.name)
def test_every_distribution_ships_a_licence_and_py_typed(directory: Path) -> None:
    assert (directory / "LICENSE").is_file()
    package = dict(DISTRIBUTIONS)[directory]
    assert (package / "py.typed").is_file()


@pytest.mark.parametrize(("directory", "package"), DISTRIBUTIONS, ids=lambda d: d.name)
def test_every_third_party_import_is_declared(directory: Path, package: Path) -> None:
    owners = packages_distributions()
    own = {package.name, "modelplug"}
    missing = []
    for name in sorted(imported_top_names(package) - own - set(sys.stdlib_module_names)):
        dists = {d.lower().replace("_", "-") for d in owners.get(name, [name])}
        if not dists & declared(directory):
            missing.append(f"{name} (from {', '.join(sorted(dists))})")
    assert not missing, f"{directory.name} imports undeclared packages: {missing}"


@pytest.mark.parametrize("directory", PLUGINS, ids=lambda d: d.name)
def test_every_plugin_requires_a_compatible_core(directory: Path) -> None:
    core_version = Version(CORE["version"])
    meta = project(directory)
    requirements = [Requirement(r) for r in meta["dependencies"]]
    requirements += [Requirement(r) for r in meta.get("optional-dependencies", {}).get("test", [])]
    ours = [r for r in requirements if r.name.startswith("modelplug")]
    assert "modelplug" in {r.name for r in ours}
    for requirement in ours:  # core, and any sibling plugin (they move together)
        assert core_version in requirement.specifier, f"{requirement} excludes {core_version}"
        assert Version(f"{core_version.major + 1}.0") not in requirement.specifier
    assert project(directory)["version"] == CORE["version"]  # they move together


@pytest.mark.parametrize("directory", PLUGINS, ids=lambda d: d.name)
def test_every_plugin_has_a_test_extra_and_its_entry_point(directory: Path) -> None:
    meta = project(directory)
    assert any(r.startswith("pytest") for r in meta["optional-dependencies"]["test"])
    assert meta["entry-points"]["modelplug"] == {meta["name"]: meta["name"].replace("-", "_")}


@pytest.mark.parametrize("directory", [d for d, _ in DISTRIBUTIONS], ids=lambda d: d.name)
def test_a_published_readme_has_no_link_that_breaks_alone(directory: Path) -> None:
    readme = (directory / project(directory)["readme"]).read_text()
    targets = re.findall(r"\]\(([^)\s]+)\)", readme)
    relative = [t for t in targets if not re.match(r"(https?:|mailto:|#)", t)]
    assert not relative, f"{directory.name}/README.md links {relative}, which break on an index"
