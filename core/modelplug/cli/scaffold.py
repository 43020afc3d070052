"""``modelplug new-plugin NAME``: a provider plugin to start from, tests included.

It copies the plugin that docs/writing-a-provider.md walks through (the Acme chat API,
kept in ``modelplug/cli/template/modelplug-acme``) under the new name: a distribution with
its entry point, the hook implementations on the kit's HTTP path, a recording, the
conformance suite and a tool-call test, all passing before the first edit. The author
then changes the request body and the event reader to their API's.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["TEMPLATE", "create"]

TEMPLATE = Path(__file__).parent / "template" / "modelplug-acme"
NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")
PREFIX = "modelplug-"  # every plugin distribution's, added to the provider type's name


def create(name: str, where: Path) -> Path:
    """Write ``modelplug-NAME/`` under ``where`` and return its path.

    :param name: the provider type and built-in provider name, lowercase words joined by
        ``-`` (``acme``, ``my-api``); the distribution's name (``modelplug-acme``) is
        taken for its provider's, so it never becomes ``modelplug-modelplug-acme``.
    :raises ValueError: a name that is not that, or a directory that already exists.
    """
    given, name = name, name.removeprefix(PREFIX)
    if not NAME.fullmatch(name):
        raise ValueError(
            f"{given!r} is not a plugin name: use lowercase letters, digits and single "
            "hyphens, starting with a letter (e.g. acme, my-api, or modelplug-acme)"
        )
    target = where / f"{PREFIX}{name}"
    if target.exists():
        raise ValueError(f"{target} already exists: choose another name or directory")
    for source in sorted(TEMPLATE.rglob("*")):
        relative = source.relative_to(TEMPLATE)
        if source.is_dir() or any(_generated(part) for part in relative.parts):
            continue
        destination = target / _renamed(str(relative), name)
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(_renamed(source.read_text(encoding="utf-8"), name), "utf-8")
    return target


def _generated(part: str) -> bool:
    """Caches a tool left beside the template (``__pycache__``, ``.mypy_cache``...)."""
    return part.startswith(".") or part == "__pycache__"


def _renamed(text: str, name: str) -> str:
    """The template's text (or a path) under the new name: its module, its key variable,
    its class names, its file names and its provider type."""
    module = name.replace("-", "_")
    camel = "".join(part.capitalize() for part in name.split("-"))
    for old, new in (
        ("modelplug-acme", f"modelplug-{name}"),
        ("modelplug_acme", f"modelplug_{module}"),
        ("test_acme", f"test_{module}"),
        ("ACME", module.upper()),
        ("Acme", camel),
        ("acme_", f"{module}_"),
        ("acme", name),
    ):
        text = text.replace(old, new)
    return text
