"""The fallback plugin stands on public names alone: it imports core and the kit by
their top-level packages only (``modelplug``, ``modelplug_kit``), imports nothing it does
not declare (no pydantic), finds policies through ``find_policies``, and takes its cooldown
store protocols from the kit, where other distributions (modelplug-redis) find them."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import modelplug_fallback
from modelplug import find_policies
from modelplug.testing import FakeModel
from modelplug_fallback.policy import FallbackPolicy

SOURCE = Path(modelplug_fallback.__file__).parent
ALLOWED_CORE = {"modelplug", "modelplug_kit"}


def imported_modules() -> set[str]:
    names: set[str] = set()
    for path in SOURCE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
    return names


def test_the_source_imports_only_the_top_level_packages_of_core_and_the_kit() -> None:
    core = {m for m in imported_modules() if m.split(".")[0] in ("modelplug", "modelplug_kit")}

    assert core <= ALLOWED_CORE, core - ALLOWED_CORE


def test_the_source_does_not_import_pydantic() -> None:
    assert not {m for m in imported_modules() if m.split(".")[0] == "pydantic"}


def test_modelplug_stream_policies_are_found_by_kind(make_client: Any) -> None:
    policy = FallbackPolicy()
    client = make_client(policy, FakeModel(), "modelplug-fallback", entry_points=True)

    found = find_policies(client, "fallback")

    assert policy in found and modelplug_fallback in found
    assert policy.modelplug_policy == modelplug_fallback.modelplug_policy == "fallback"


def test_the_cooldown_store_protocols_are_the_kits() -> None:
    import modelplug_kit

    assert isinstance(modelplug_fallback.SHARED, modelplug_kit.MemoryCooldowns)
    assert isinstance(modelplug_fallback.SHARED, modelplug_kit.CooldownStore)
    # One home for each name: the plugin does not hand the kit's protocols on.
    assert not hasattr(modelplug_fallback, "CooldownStore")
    assert not hasattr(modelplug_fallback, "MemoryCooldowns")
