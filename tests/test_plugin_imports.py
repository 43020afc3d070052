"""Plugins build on public names only: the top-level packages ``modelplug`` (core),
``modelplug_kit`` (the provider kit) and another plugin's top-level package (``from
modelplug_limits import counter_store_for``), never a module inside any of them. A plugin
that needs anything deeper means that distribution is missing a public piece. Its own
package it may import at any depth. (tests/test_import_contracts.py holds the rule for
core as an import-linter contract; this one names the line.)"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(ROOT.glob("plugins/*/src/**/*.py"))
# Where each package of this repository lives: core and every plugin distribution's.
PACKAGE_DIRS = {"modelplug": ROOT / "core" / "modelplug"} | {
    path.name: path for path in ROOT.glob("plugins/*/src/modelplug_*") if path.is_dir()
}


def is_ours(name: str) -> bool:
    """Whether ``name`` is core, the kit, a plugin or a module inside one of them."""
    top = name.split(".")[0]
    return top == "modelplug" or top.startswith("modelplug_")


def is_module(name: str) -> bool:
    """Whether the dotted ``name`` is a module (or package) of this repository."""
    top, *inside = name.split(".")
    base = PACKAGE_DIRS.get(top)
    if base is None or not inside:
        return base is not None
    where = base.joinpath(*inside)
    return where.with_name(where.name + ".py").is_file() or (where / "__init__.py").is_file()


def package_imports(path: Path) -> list[tuple[int, str]]:
    """The modules of core, the kit and the plugins that ``path`` imports, with their
    lines. ``from modelplug_limits import policy`` imports the module
    ``modelplug_limits.policy``, and is listed so."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            inner = [f"{node.module}.{alias.name}" for alias in node.names]
            names = [node.module, *(name for name in inner if is_module(name))]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [(node.lineno, n) for n in names if is_ours(n)]
    return found


def deep_imports(path: Path, own: str) -> list[str]:
    """Each import in ``path`` of a module inside another package than ``own``."""
    return [
        f"line {line}: {name}"
        for line, name in package_imports(path)
        if "." in name and name.split(".")[0] != own
    ]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_plugin_source_imports_other_packages_by_top_level_only(path: Path) -> None:
    own = path.relative_to(ROOT).parts[3]  # plugins/<dist>/src/<package>/...
    deep = deep_imports(path, own)
    assert not deep, (
        f"{path.relative_to(ROOT)} imports modules inside another distribution (use its "
        f"top-level names, or add the public name it lacks): {deep}"
    )


def test_plugin_source_touches_no_private_host_attribute() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in SOURCES
        if re.search(r"\bclient\.host\b|\._http\b", path.read_text())
    ]
    assert not offenders


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text(
        "from modelplug.builtin.classify import classify\nimport modelplug.contract.types\n"
    )
    assert package_imports(module) == [
        (1, "modelplug.builtin.classify"),
        (2, "modelplug.contract.types"),
    ]


def test_the_check_sees_another_plugins_modules(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text(
        "from modelplug_limits.plan import input_tokens\n"
        "from modelplug_limits import LimitsPolicy, policy\n"
        "import modelplug_redis.counters\n"
        "from modelplug_kit.stores import Charge\n"
        "from modelplug_gateway.keys import open_store\n"
        "from modelplug_kit import Charge\n"
        "import json\n"
    )
    assert deep_imports(module, own="modelplug_gateway") == [
        "line 1: modelplug_limits.plan",
        "line 2: modelplug_limits.policy",
        "line 3: modelplug_redis.counters",
        "line 4: modelplug_kit.stores",
    ]
