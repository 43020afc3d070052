"""Which files make up an installed plugin: what the plugin lock hashes and the audit
checks.

For a distribution installed from a wheel: the files its ``RECORD`` lists with a digest,
inside the directory it was installed into. Left out: what the installer writes about the
installation rather than what the wheel holds (``INSTALLER``, ``REQUESTED``,
``direct_url.json``, ``RECORD`` itself), compiled bytecode (no digest in RECORD), and
files outside that directory (console scripts, whose first line the installer rewrites
for each environment).

For an editable install, RECORD lists only the ``.pth`` (or finder) file that points at
the project's source, so the source is hashed too: the files under the directories the
``.pth`` lines name (or a setuptools finder's ``MAPPING`` maps) that belong to the
entry point's top-level package, keyed as a wheel would list them
(``modelplug_x/__init__.py``), bytecode caches left out.
"""

from __future__ import annotations

import csv
import json
import os
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

__all__ = ["PluginFile", "distribution_files", "is_editable", "located", "record_rows"]

INSTALLER_FILES = ("INSTALLER", "REQUESTED", "direct_url.json", "RECORD")


@dataclass(frozen=True)
class PluginFile:
    """One file of a plugin: ``key`` as the lock names it, ``path`` where it is."""

    key: str
    path: Path


def record_rows(dist: metadata.Distribution) -> list[tuple[str, str]]:
    """RECORD's (path, digest) rows, the digest "" where RECORD gives none."""
    text = dist.read_text("RECORD") or ""
    return [(row[0], row[1] if len(row) > 1 else "") for row in csv.reader(text.splitlines())]


def is_editable(dist: metadata.Distribution) -> bool:
    """Whether pip installed ``dist`` in editable mode (PEP 660, ``direct_url.json``)."""
    try:
        return bool(json.loads(dist.read_text("direct_url.json") or "")["dir_info"]["editable"])
    except (ValueError, LookupError, TypeError):
        return False


def distribution_files(
    dist: metadata.Distribution, module: str, listings: list[Path]
) -> list[PluginFile]:
    """The files of ``dist`` the lock hashes, sorted by key; ``module`` is the entry
    point's module (its top-level package is what an editable install's source adds).

    :param listings: receives the paths whose change would change the list:
        RECORD, ``direct_url.json``, and for an editable install the source directories
        walked (a directory's mtime changes when an entry is added or removed).
    """
    files: dict[str, PluginFile] = {}
    rows = record_rows(dist)
    for key, digest in rows:
        parts = key.split("/")
        if parts[-1] in ("RECORD", "direct_url.json"):
            listings.append(located(dist, key))
        installer = len(parts) == 2 and parts[1] in INSTALLER_FILES
        if digest and not installer and not key.startswith(("/", "../")) and ":" not in parts[0]:
            files[key] = PluginFile(key, located(dist, key))
    if is_editable(dist):
        top = module.split(":")[0].split(".")[0]
        for root in _editable_roots(dist, rows, top):
            listings.append(root)
            for path in _package_files(root, top, listings):
                key = path.relative_to(root).as_posix()
                files.setdefault(key, PluginFile(key, path))
    return [files[k] for k in sorted(files)]


def _editable_roots(
    dist: metadata.Distribution, rows: list[tuple[str, str]], top: str
) -> list[Path]:
    """The source directories an editable install adds: path lines of its ``.pth``
    files, and the directory a setuptools finder's ``MAPPING`` maps ``top`` to (read
    from its text, never run)."""
    roots: list[Path] = []
    for key, _ in rows:
        if "/" in key or not key.endswith((".pth", "_finder.py")):
            continue
        try:
            text = located(dist, key).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if key.endswith(".pth"):
            lines = [x.strip() for x in text.splitlines()]
            roots += [located(dist, x) for x in lines if x and not x.startswith(("#", "import"))]
        elif mapped := re.search(rf"""['"]{top}['"]\s*:\s*['"]([^'"]+)['"]""", text):
            roots.append(Path(mapped.group(1)).parent)
    return [r for r in roots if r.is_dir()]


def _package_files(root: Path, top: str, listings: list[Path]) -> list[Path]:
    if (root / f"{top}.py").is_file():
        return [root / f"{top}.py"]
    out: list[Path] = []
    for directory, subdirs, names in os.walk(root / top):
        listings.append(Path(directory))
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        out += [Path(directory, n) for n in names if not n.endswith((".pyc", ".pyo"))]
    return out


def located(dist: metadata.Distribution, key: str) -> Path:
    """Where a RECORD path of ``dist`` is on disk."""
    return Path(str(dist.locate_file(key)))
