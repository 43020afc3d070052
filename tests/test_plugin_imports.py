"""Plugins build on public names only: the top-level packages ``modelplug`` (core) and
``modelplug_kit`` (the provider kit). A plugin that needs anything else means core or
the kit is missing a public piece. (tests/test_import_contracts.py holds the same rule
as an import-linter contract; this one names the line.)"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = {"modelplug", "modelplug_kit"}
SOURCES = sorted(ROOT.glob("plugins/*/src/**/*.py"))


def core_imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [
            (node.lineno, n) for n in names if n.split(".")[0] in ("modelplug", "modelplug_kit")
        ]
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_plugin_source_imports_only_public_core_modules(path: Path) -> None:
    own = path.relative_to(ROOT).parts[3]  # plugins/<dist>/src/<package>/...
    private = [
        f"line {line}: {name}"
        for line, name in core_imports(path)
        if name not in PUBLIC and name.split(".")[0] != own
    ]
    assert not private, f"{path.relative_to(ROOT)} imports core internals: {private}"


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
    assert core_imports(module) == [
        (1, "modelplug.builtin.classify"),
        (2, "modelplug.contract.types"),
    ]
