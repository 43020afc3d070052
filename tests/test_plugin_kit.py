"""The plugin kit: four parts, each listed once in its ``KIT`` table, which everything
else is checked against (``__all__``, ``dir()``, what a type checker sees, the module's
documentation); every name loads, lazily, and a plugin of this repository imports each
name from the part that lists it."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PARTS = [
    "modelplug.plugin",
    "modelplug.wire",
    "modelplug.schema",
    "modelplug.policy",
]
ALL_NAMES = [(part, name) for part in PARTS for name in importlib.import_module(part).KIT]


def part_source(part: str) -> Path:
    module = importlib.import_module(part)
    assert module.__file__ is not None
    return Path(module.__file__)


def type_checker_view(part: str) -> dict[str, str]:
    """The ``from ..module import X as X`` names under ``if TYPE_CHECKING:``: name ->
    module (relative to ``modelplug``)."""
    tree = ast.parse(part_source(part).read_text())
    seen: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.level == 2, ast.unparse(stmt)
                for alias in stmt.names:
                    assert alias.asname == alias.name, f"{part}: {alias.name} is not `X as X`"
                    seen[alias.name] = stmt.module or ""
    return seen


@pytest.mark.parametrize("part", PARTS)
def test_all_and_dir_are_the_kit_table(part: str) -> None:
    module = importlib.import_module(part)
    assert module.__all__ == sorted(module.KIT)
    assert [n for n in dir(module) if n in module.KIT] == sorted(module.KIT)


@pytest.mark.parametrize("part", PARTS)
def test_type_checkers_see_the_kit_table(part: str) -> None:
    assert type_checker_view(part) == importlib.import_module(part).KIT


@pytest.mark.parametrize("part", PARTS)
def test_the_parts_documentation_names_each_of_its_names(part: str) -> None:
    module = importlib.import_module(part)
    missing = [n for n in module.KIT if f"`{n}`" not in (module.__doc__ or "")]
    assert not missing, f"{part}'s docstring does not name {missing}"


def test_no_name_is_in_two_parts() -> None:
    names = [name for _, name in ALL_NAMES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(("part", "name"), ALL_NAMES, ids=[f"{p}:{n}" for p, n in ALL_NAMES])
def test_every_listed_name_loads_from_its_module(part: str, name: str) -> None:
    module = importlib.import_module(part)
    home = importlib.import_module(f"modelplug.{module.KIT[name]}")
    assert getattr(module, name) is getattr(home, name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    kit = importlib.import_module("modelplug.plugin")
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        kit.nope  # noqa: B018


SOURCES = sorted(ROOT.glob("plugins/*/src/**/*.py")) + sorted(
    ROOT.glob("core/modelplug/template/**/*.py")
)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_plugin_imports_each_kit_name_from_the_part_that_lists_it(path: Path) -> None:
    tables = {part: importlib.import_module(part).KIT for part in PARTS}
    wrong = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module in tables and node.level == 0:
            wrong += [
                f"{a.name} from {node.module}"
                for a in node.names
                if a.name not in tables[node.module]
            ]
    assert not wrong, f"{path.relative_to(ROOT)}: {wrong}"


def test_importing_the_kit_and_hookimpl_loads_nothing_heavy() -> None:
    code = (
        "import sys; from modelplug.plugin import hookimpl; import modelplug.policy, "
        "modelplug.wire, modelplug.schema; "
        "print(sorted(m for m in ('pydantic', 'httpx2', 'asyncio', 'jsonschema') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
