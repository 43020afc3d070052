"""A module imported on first attribute access, to keep ``import modelplug`` cheap."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _LazyModule(ModuleType):
    def __getattr__(self, name: str) -> Any:
        module = importlib.import_module(self.__name__)
        return getattr(module, name)


def lazy_module(name: str) -> Any:
    """A stand-in for the module ``name`` that imports it when first used."""
    return _LazyModule(name)
