"""The export tables: core (``modelplug``), the provider kit (``modelplug_kit``) and the
kit's test kit each list every public name once, in their ``EXPORTS`` table, which
everything else is checked against (``__all__``, ``dir()``, what a type checker sees,
the kit's README); every name loads, lazily, and a plugin of this repository imports
each name from the package that lists it."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KIT_PACKAGES = ["modelplug_kit", "modelplug_kit.testing"]
PACKAGES = ["modelplug", *KIT_PACKAGES]
ALL_NAMES = [(p, name) for p in PACKAGES for name in importlib.import_module(p).EXPORTS]


def type_checker_view(package: str) -> dict[str, str]:
    """The ``from module import X as X`` names under ``if TYPE_CHECKING:``: name ->
    module."""
    source = importlib.import_module(package).__file__
    assert source is not None
    seen: dict[str, str] = {}
    for node in ast.parse(Path(source).read_text()).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                if not isinstance(stmt, ast.ImportFrom) or stmt.module == "collections.abc":
                    continue
                for alias in stmt.names:
                    assert alias.asname == alias.name, f"{package}: {alias.name} is not `X as X`"
                    seen[alias.name] = stmt.module or ""
    return seen


@pytest.mark.parametrize("package", KIT_PACKAGES)
def test_all_and_dir_are_the_export_table(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__all__ == sorted(module.EXPORTS)
    assert [n for n in dir(module) if n in module.EXPORTS] == sorted(module.EXPORTS)


@pytest.mark.parametrize("package", PACKAGES)
def test_type_checkers_see_the_export_table(package: str) -> None:
    assert type_checker_view(package) == importlib.import_module(package).EXPORTS


def test_the_kits_readme_names_each_of_its_names() -> None:
    readme = (ROOT / "plugins/modelplug-kit/README.md").read_text()
    kit = importlib.import_module("modelplug_kit")
    missing = [n for n in kit.EXPORTS if f"`{n}`" not in readme]
    assert not missing, f"plugins/modelplug-kit/README.md does not name {missing}"


def test_no_name_is_exported_by_both_core_and_the_kit() -> None:
    core = set(importlib.import_module("modelplug").EXPORTS)
    kit = set(importlib.import_module("modelplug_kit").EXPORTS)
    assert not core & kit


@pytest.mark.parametrize(("package", "name"), ALL_NAMES, ids=[f"{p}:{n}" for p, n in ALL_NAMES])
def test_every_listed_name_loads_from_its_module(package: str, name: str) -> None:
    module = importlib.import_module(package)
    home = importlib.import_module(module.EXPORTS[name])
    assert getattr(module, name) is getattr(home, name)


@pytest.mark.parametrize("package", PACKAGES)
def test_an_unknown_name_is_an_attribute_error(package: str) -> None:
    module = importlib.import_module(package)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        module.nope  # noqa: B018


SOURCES = sorted(ROOT.glob("plugins/*/src/**/*.py")) + sorted(
    ROOT.glob("core/modelplug/cli/template/**/*.py")
)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_plugin_imports_each_name_from_the_package_that_lists_it(path: Path) -> None:
    tables = {p: importlib.import_module(p).EXPORTS for p in PACKAGES}
    wrong = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module in tables and node.level == 0:
            listed = tables[node.module]
            if node.module == "modelplug":
                listed = set(listed) | set(importlib.import_module("modelplug").__all__)
            wrong += [f"{a.name} from {node.module}" for a in node.names if a.name not in listed]
    assert not wrong, f"{path.relative_to(ROOT)}: {wrong}"


def test_importing_the_kit_and_hookimpl_loads_nothing_heavy() -> None:
    code = (
        "import sys; from modelplug import hookimpl; import modelplug_kit, modelplug_kit.testing; "
        "print(sorted(m for m in ('pydantic', 'httpx2', 'asyncio', 'jsonschema') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
