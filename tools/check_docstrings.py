"""Fail when a public name of modelplug has no docstring.

Public means: the names in ``__all__`` of ``modelplug`` (core's export list),
``modelplug.testing``, ``modelplug_kit`` (the provider kit's), ``modelplug_kit.testing``
and ``modelplug.contract.hookspecs`` (what the API reference of the documentation site
lists), and the public methods and properties their classes define themselves. Run by
``tox -e docs`` before the site is built, and by the tests.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Iterator

MODULES = [
    "modelplug",
    "modelplug.testing",
    "modelplug_kit",
    "modelplug_kit.testing",
    "modelplug.contract.hookspecs",
]


def public_names(module_name: str) -> Iterator[tuple[str, object]]:
    module = importlib.import_module(module_name)
    for name in getattr(module, "__all__", []):
        yield f"{module_name}.{name}", getattr(module, name)


def members(owner: str, cls: type) -> Iterator[tuple[str, object]]:
    for name, value in vars(cls).items():
        # test_* methods are the conformance suite's tests: their names are their docs.
        if name.startswith(("_", "test_")) or name in ("model_config", "model_fields"):
            continue
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if inspect.isfunction(value) or isinstance(value, property):
            yield f"{owner}.{name}", value


def own_doc(obj: object) -> str | None:
    if isinstance(obj, property):
        return obj.__doc__
    doc = getattr(obj, "__doc__", None)
    if inspect.isclass(obj):
        # A class without a docstring of its own inherits none here: pydantic's and
        # dataclasses' generated ones don't describe it.
        doc = vars(obj).get("__doc__")
        if doc and obj.__module__ != "builtins" and doc.startswith(f"{obj.__name__}("):
            return None  # the dataclass's generated signature
    return doc


def missing() -> list[str]:
    found: list[str] = []
    seen: set[int] = set()
    for module_name in MODULES:
        for name, obj in public_names(module_name):
            if not (inspect.isclass(obj) or inspect.isfunction(obj)) or id(obj) in seen:
                continue
            seen.add(id(obj))
            if not (own_doc(obj) or "").strip():
                found.append(name)
            if inspect.isclass(obj) and obj.__module__.startswith("modelplug"):
                for member, value in members(name, obj):
                    if not (own_doc(value) or "").strip():
                        found.append(member)
    return found


def main() -> int:
    gaps = missing()
    for name in gaps:
        print(f"no docstring: {name}", file=sys.stderr)
    if gaps:
        print(f"{len(gaps)} public names have no docstring", file=sys.stderr)
        return 1
    print("every public name has a docstring")
    return 0


if __name__ == "__main__":
    sys.exit(main())
