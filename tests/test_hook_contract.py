"""Every hook spec is a documented contract: typed, with a docstring, shown in the README
with its exact signature, and with a test named for it."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from modelplug.contract import hookspecs

ROOT = Path(__file__).resolve().parent.parent
HOOKS = sorted(name for name in dir(hookspecs) if name.startswith("modelplug_"))


def signature_text(name: str) -> str:
    sig = inspect.signature(getattr(hookspecs, name))
    params = ", ".join(f"{p.name}: {p.annotation}" for p in sig.parameters.values())
    return f"{name}({params}) -> {sig.return_annotation}"


def test_the_five_core_hooks_exist_and_are_firstresult() -> None:
    for name in (
        "modelplug_resolve",
        "modelplug_stream",
        "modelplug_price",
        "modelplug_classify_error",
        "modelplug_parse_text_tool_calls",
    ):
        opts = getattr(hookspecs, name).modelplug_spec
        assert opts["firstresult"] is True, name


@pytest.mark.parametrize("name", HOOKS)
def test_hook_is_typed_and_documented(name: str) -> None:
    function = getattr(hookspecs, name)
    sig = inspect.signature(function)
    assert all(p.annotation is not inspect.Parameter.empty for p in sig.parameters.values())
    assert sig.return_annotation is not inspect.Signature.empty
    doc = inspect.getdoc(function) or ""
    assert "Called" in doc, f"{name}: say when it is called"
    for parameter in sig.parameters:
        assert f":param {parameter}:" in doc, f"{name}: document {parameter}"
    assert ":return:" in doc
    assert ".. versionadded::" in doc, f"{name}: say since which version it exists"


@pytest.mark.parametrize("name", HOOKS)
def test_hook_is_in_the_readme_with_its_exact_signature(name: str) -> None:
    page = (ROOT / "docs/plugin-kit.md").read_text()
    assert signature_text(name) in page


@pytest.mark.parametrize("name", HOOKS)
def test_hook_has_a_test_named_for_it(name: str) -> None:
    pattern = re.compile(rf"^\s*(async )?def test_{name}\b", re.MULTILINE)
    files = [*ROOT.glob("tests/**/test_*.py"), *ROOT.glob("plugins/*/tests/**/test_*.py")]
    assert any(pattern.search(path.read_text()) for path in files), f"no test_{name}"
