"""Names and modules imported on first use, to keep ``import modelplug`` cheap."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any


class _LazyModule(ModuleType):
    def __getattr__(self, name: str) -> Any:
        # sys.modules first: import_module runs through importlib's Python code on every
        # access, and a stand-in is read on every call (the client's asyncio, twice).
        module = sys.modules.get(self.__name__)
        if module is None:
            module = importlib.import_module(self.__name__)
        return getattr(module, name)


def lazy_module(name: str) -> Any:
    """A stand-in for the module ``name`` that imports it when first used."""
    return _LazyModule(name)


def lazy_exports(
    package: str, where: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for names that live in its modules
    (PEP 562): ``where`` maps each name to its module's full name, imported when the
    name is first used and then kept in the package. A plugin's entry module uses this
    to stay cheap to import."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(where)

    return __getattr__, __dir__
