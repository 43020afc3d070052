"""Every distribution stands on its own: its licence and type marker, its declared
imports, a compatible range on core, a test extra, and a README that renders alone."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path
from types import ModuleType

import pytest
from modelplug.contract import hookspecs
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
        parts = path.relative_to(package).parts
        if "template" in parts or "bench_tasks" in parts:
            # Core's plugin template and bench tasks are data: their imports are the new
            # plugin's, or a task's own modules.
            continue
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


def lowest(requirement: Requirement) -> Version:
    """The lowest version a requirement admits (its ``>=``)."""
    found = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
    assert found, f"{requirement} names no lowest version"
    return max(found)


def minor(version: Version) -> tuple[int, int]:
    return version.major, version.minor


def added_in(hook: str) -> Version:
    """The version a hook spec says it was added in (``.. versionadded::``)."""
    found = re.search(r"\.\. versionadded:: (\S+)", getattr(hookspecs, hook).__doc__ or "")
    assert found, f"{hook} does not say since when it exists"
    return Version(found.group(1))


def implemented_hooks(package: Path) -> set[str]:
    """The hooks a package implements: functions and methods named for a hook spec."""
    names: set[str] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
    return names & HOOKS


HOOKS = {name for name in dir(hookspecs) if name.startswith("modelplug_")}


def test_core_s_version_has_every_hook_its_specs_say_it_has() -> None:
    core = Version(CORE["version"])
    newer = [h for h in sorted(HOOKS) if minor(added_in(h)) > minor(core)]
    assert newer == [], f"core {core} has hooks added in a later version: {newer}"


@pytest.mark.parametrize(("directory", "package"), DISTRIBUTIONS[1:], ids=lambda d: d.name)
def test_every_plugin_requires_a_core_with_every_hook_it_implements(
    directory: Path, package: Path
) -> None:
    requirement = next(
        Requirement(r) for r in project(directory)["dependencies"] if r.startswith("modelplug")
    )
    assert requirement.name == "modelplug"
    needs = {h: added_in(h) for h in implemented_hooks(package)}
    too_new = sorted(h for h, v in needs.items() if minor(v) > minor(lowest(requirement)))
    # An older core refuses a plugin with a hook it does not know: the plugin's range
    # must not admit one.
    assert too_new == [], f"{requirement} admits a core without {too_new}"


def test_the_plugin_template_requires_core_as_the_plugins_do() -> None:
    template = ROOT / "core" / "modelplug" / "cli" / "template" / "modelplug-acme"
    ours = project(PLUGINS[0])["dependencies"][0]
    assert Requirement(ours).name == "modelplug"
    # A provider builds on the kit too, at the same major version as core.
    kit = ours.replace("modelplug", "modelplug-kit", 1)
    assert project(template)["dependencies"] == [ours, kit]
    assert implemented_hooks(template / "src") <= {
        h for h in HOOKS if minor(added_in(h)) <= minor(lowest(Requirement(ours)))
    }


def bump_version() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bump_version", ROOT / "tools/bump_version.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_development_version_is_required_as_itself_and_a_release_by_its_minor() -> None:
    tool = bump_version()
    assert tool.core_range("1.1.0.dev0") == "modelplug>=1.1.0.dev0,<2"
    assert tool.core_range("1.1.0") == "modelplug>=1.1,<2"
    assert tool.core_range("2.0.3", "modelplug-limits") == "modelplug-limits>=2.0,<3"
    # pip admits a pre-release only where a requirement names one: the dev range does.
    assert Version("1.1.0.dev0") in Requirement(tool.core_range("1.1.0.dev0")).specifier
    assert Version("1.1.0.dev0") not in Requirement("modelplug>=1.1,<2").specifier


@pytest.mark.parametrize(
    "path",
    [
        *(p / "pyproject.toml" for p in PLUGINS),
        ROOT / "core/modelplug/cli/template/modelplug-acme/pyproject.toml",
        ROOT / "docs/writing-a-provider.md",
    ],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_every_requirement_on_core_is_what_bump_version_sets(path: Path) -> None:
    text = path.read_text()
    assert bump_version().with_requirements(text, CORE["version"]) == text


@pytest.mark.parametrize(
    "directory", [p for p in PLUGINS if p.name != "modelplug-kit"], ids=lambda d: d.name
)
def test_every_plugin_has_a_test_extra_and_its_entry_point(directory: Path) -> None:
    meta = project(directory)
    assert any(r.startswith("pytest") for r in meta["optional-dependencies"]["test"])
    assert meta["entry-points"]["modelplug"] == {meta["name"]: meta["name"].replace("-", "_")}


def test_the_kit_is_a_library_not_a_plugin() -> None:
    # Installing the kit adds no hooks: only the plugins that build on it do. Its
    # pytest fixtures (wire_server) come through pytest11.
    meta = project(ROOT / "plugins/modelplug-kit")
    assert "modelplug" not in meta["entry-points"]
    assert meta["entry-points"]["pytest11"] == {
        "modelplug-kit": "modelplug_kit.testing.pytest_plugin"
    }
    assert any(r.startswith("pytest") for r in meta["optional-dependencies"]["test"])


@pytest.mark.parametrize("directory", [d for d, _ in DISTRIBUTIONS], ids=lambda d: d.name)
def test_a_published_readme_has_no_link_that_breaks_alone(directory: Path) -> None:
    readme = (directory / project(directory)["readme"]).read_text()
    targets = re.findall(r"\]\(([^)\s]+)\)", readme)
    relative = [t for t in targets if not re.match(r"(https?:|mailto:|#)", t)]
    assert not relative, f"{directory.name}/README.md links {relative}, which break on an index"
