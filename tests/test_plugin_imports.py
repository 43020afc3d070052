"""Plugins build on core's public API only: the plugin kit, the neutral types, the hook
specs and the package root. A plugin that needs anything else means core is missing a
public piece."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = {
    "modelplug",
    "modelplug.plugin",
    "modelplug.wire",
    "modelplug.schema",
    "modelplug.policy",
    "modelplug.contract.types",
    "modelplug.contract.hookspecs",
}
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
        found += [(node.lineno, n) for n in names if n.split(".")[0] == "modelplug"]
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_plugin_source_imports_only_public_core_modules(path: Path) -> None:
    private = [f"line {line}: {name}" for line, name in core_imports(path) if name not in PUBLIC]
    assert not private, f"{path.relative_to(ROOT)} imports core internals: {private}"


def test_plugin_source_touches_no_private_host_attribute() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in SOURCES
        if ".host." in path.read_text() or "._http" in path.read_text()
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
