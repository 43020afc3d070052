"""Every public name has a docstring: the API reference of the documentation site is
built from them (tools/check_docstrings.py, which ``tox -e docs`` runs before mkdocs)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_checker() -> object:
    spec = importlib.util.spec_from_file_location(
        "check_docstrings", ROOT / "tools/check_docstrings.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_docstrings"] = module
    spec.loader.exec_module(module)
    return module


def test_every_public_name_has_a_docstring() -> None:
    checker = load_checker()
    assert checker.missing() == []  # type: ignore[attr-defined]


def test_the_checker_finds_a_missing_docstring(monkeypatch: object) -> None:
    checker = load_checker()
    import modelplug

    def undocumented() -> None:
        pass

    monkeypatch.setattr(modelplug, "undocumented", undocumented, raising=False)  # type: ignore[attr-defined]
    monkeypatch.setattr(modelplug, "__all__", [*modelplug.__all__, "undocumented"])  # type: ignore[attr-defined]
    assert checker.missing() == ["modelplug.undocumented"]  # type: ignore[attr-defined]
