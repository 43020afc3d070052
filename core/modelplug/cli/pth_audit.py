"""The ``.pth`` files of the running Python environment that execute code at every start
(and an entry point whose module is another distribution's), for ``modelplug plugins
audit`` and ``modelplug install``.

Python's ``site`` module runs each line of a ``.pth`` file in a site directory that
starts with ``import``, before any program's first import: the place a poisoned release
hides a credential stealer (no allow-list of plugins can stop it, since it runs first).
This finds such files and the distribution whose RECORD installed each one.
"""

from __future__ import annotations

import os
import site
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from modelplug.host.plugin_files import distribution_files, located, record_rows

__all__ = [
    "ExecutablePth",
    "executable_lines",
    "executable_pth_files",
    "module_among_files",
    "site_directories",
    "wheel_pth_files",
]


@dataclass(frozen=True)
class ExecutablePth:
    """A ``.pth`` file with an executable line; ``distribution`` is None when no
    installed distribution's RECORD lists it."""

    path: Path
    first_line: str
    distribution: str | None


def site_directories() -> list[Path]:
    """The directories whose ``.pth`` files this interpreter processes at startup."""
    dirs = list(site.getsitepackages()) if hasattr(site, "getsitepackages") else []
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    seen: list[Path] = []
    for raw in dirs:
        path = Path(raw)
        if path.is_dir() and path.resolve() not in {p.resolve() for p in seen}:
            seen.append(path)
    return seen


def executable_pth_files(directories: list[Path] | None = None) -> list[ExecutablePth]:
    """Every ``.pth`` file with an executable line in ``directories`` (default: this
    interpreter's site directories), with the distribution that installed it."""
    dirs = site_directories() if directories is None else directories
    owners = _owners(dirs)
    found: list[ExecutablePth] = []
    for directory in dirs:
        for path in sorted(directory.glob("*.pth")):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            lines = executable_lines(text)
            if lines:
                owner = owners.get(os.path.normcase(str(path.resolve())))
                found.append(ExecutablePth(path, lines[0], owner))
    return found


def _owners(directories: list[Path]) -> dict[str, str]:
    """Each file a distribution's RECORD lists, by its resolved path, to that name."""
    owners: dict[str, str] = {}
    paths = [str(d) for d in directories] or sys.path
    for dist in metadata.distributions(path=paths):
        for key, _ in record_rows(dist):
            if key.endswith(".pth"):
                where = located(dist, key).resolve()
                owners[os.path.normcase(str(where))] = dist.name
    return owners


def wheel_pth_files(wheel: Path) -> list[tuple[str, str]]:
    """The ``.pth`` files a wheel would install into a site directory (at its root, or
    under ``NAME.data/purelib`` or ``platlib``) that hold an executable line: each as
    (member name, first executable line)."""
    import zipfile

    found: list[tuple[str, str]] = []
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            parts = member.split("/")
            at_root = len(parts) == 1
            in_lib = (
                len(parts) == 3
                and parts[0].endswith(".data")
                and parts[1]
                in (
                    "purelib",
                    "platlib",
                )
            )
            if not member.endswith(".pth") or not (at_root or in_lib):
                continue
            text = archive.read(member).decode("utf-8", errors="replace")
            lines = executable_lines(text)
            if lines:
                found.append((member, lines[0]))
    return found


def module_among_files(dist: metadata.Distribution, module: str) -> bool:
    """Whether the entry point's ``module`` is one of ``dist``'s own files (RECORD's, or
    for an editable install the source its ``.pth`` names), found without importing it."""
    dotted = module.split(":")[0].strip()
    stem = dotted.replace(".", "/")
    candidates = (f"{stem}.py", f"{stem}/__init__.py")
    keys = {f.key for f in distribution_files(dist, dotted, [])}
    if any(c in keys for c in candidates):
        return True
    # A compiled module: modelplug_x/fast.cpython-311-x86_64-linux-gnu.so
    return any(k.startswith(f"{stem}.") and k.endswith((".so", ".pyd")) for k in keys)


def executable_lines(text: str) -> list[str]:
    """The lines of a ``.pth`` file that Python runs at startup (``site`` executes a line
    that starts with ``import`` followed by a space or a tab)."""
    return [line for line in text.splitlines() if line.startswith(("import ", "import\t"))]
