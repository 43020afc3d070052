"""The plugin kit names what it lists, lazily: each name loads, and importing the kit
loads nothing heavy."""

from __future__ import annotations

import subprocess
import sys

import modelplug.plugin as kit
import pytest


@pytest.mark.parametrize("name", kit.__all__)
def test_every_listed_name_loads(name: str) -> None:
    assert getattr(kit, name) is not None


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        kit.nope  # noqa: B018


def test_importing_the_kit_and_hookimpl_loads_nothing_heavy() -> None:
    code = (
        "import sys; from modelplug.plugin import hookimpl; "
        "print(sorted(m for m in ('pydantic', 'httpx2', 'asyncio', 'jsonschema') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
