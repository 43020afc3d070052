"""Set the version of core and of every plugin, and the plugins' ``modelplug`` range.

    python tools/bump_version.py 1.1.0          # a release
    python tools/bump_version.py 1.2.0.dev0     # the next one, under way

Core and the plugins in this repository move together: each ``pyproject.toml`` gets the
version, ``core/modelplug/__init__.py`` its ``__version__``, each plugin package its
``__version__`` where it has one, and every plugin's requirement on core becomes
``modelplug>=MAJOR.MINOR,<MAJOR+1`` (a plugin keeps working on any later 1.x core: the
contract only grows within a major version), as does any requirement on a sibling
plugin. A development version (``1.2.0.dev0``) is required as itself
(``modelplug>=1.2.0.dev0,<2``): its plugins use what 1.2 adds, which no 1.1 has, and
pip takes a pre-release only where a requirement names one. The plugin template that
``modelplug new-plugin`` copies (and the guide that shows it) requires core the same
way. ``tests/test_distributions.py`` checks it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSION = re.compile(r"^\d+\.\d+\.\d+(\.dev\d+)?$")
TEMPLATE = ROOT / "core" / "modelplug" / "cli" / "template" / "modelplug-acme" / "pyproject.toml"
GUIDE = ROOT / "docs" / "writing-a-provider.md"  # shows the template's pyproject.toml


def core_range(version: str, name: str = "modelplug") -> str:
    major, minor, _ = version.split(".", 2)
    lowest = version if ".dev" in version else f"{major}.{minor}"
    return f"{name}>={lowest},<{int(major) + 1}"


def with_requirements(text: str, version: str) -> str:
    """``text`` with every requirement on core or a sibling plugin (a name followed by a
    version range, or core's bare name in a dependencies list) set to ``version``'s
    range. Never the project's own name or an entry point."""
    text = re.sub(
        r'"(modelplug(?:-[a-z0-9-]+)?)(?:>=|<=|==|~=|<|>)[^"]*"',
        lambda m: f'"{core_range(version, m.group(1))}"',
        text,
    )
    return re.sub(
        r'(?m)^(dependencies = \[[^\]]*?)"modelplug"',
        lambda m: f'{m.group(1)}"{core_range(version)}"',
        text,
    )


def with_version(text: str, version: str) -> str:
    return re.sub(r'(?m)^version = "[^"]*"', f'version = "{version}"', text, count=1)


def set_pyproject(path: Path, version: str, *, plugin: bool) -> None:
    text = with_version(path.read_text(), version)
    path.write_text(with_requirements(text, version) if plugin else text)


def set_requirements(path: Path, version: str) -> None:
    """Only the requirements: the template keeps a new plugin's own version (0.1.0)."""
    path.write_text(with_requirements(path.read_text(), version))


def set_dunder(path: Path, version: str) -> None:
    text = path.read_text()
    if "__version__ = " in text:
        path.write_text(re.sub(r'__version__ = "[^"]*"', f'__version__ = "{version}"', text))


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not VERSION.match(argv[0]):
        print("usage: python tools/bump_version.py MAJOR.MINOR.PATCH[.devN]", file=sys.stderr)
        return 2
    version = argv[0]
    set_pyproject(ROOT / "pyproject.toml", version, plugin=False)
    set_dunder(ROOT / "core" / "modelplug" / "__init__.py", version)
    for pyproject in sorted((ROOT / "plugins").glob("*/pyproject.toml")):
        set_pyproject(pyproject, version, plugin=True)
        for init in pyproject.parent.glob("src/*/__init__.py"):
            set_dunder(init, version)
    set_requirements(TEMPLATE, version)
    set_requirements(GUIDE, version)
    print(f"core and every plugin are at {version}; plugins require {core_range(version)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
