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
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

__all__ = [
    "PluginFile",
    "distribution_files",
    "executable_lines",
    "is_editable",
    "located",
    "module_among_files",
    "record_rows",
]

INSTALLER_FILES = frozenset({"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"})


@dataclass(frozen=True)
class PluginFile:
    """One file of a plugin: ``key`` as the lock names it, ``path`` where it is, and the
    digest RECORD gives it (``sha256=<base64>``; None for an editable install's source)."""

    key: str
    path: Path
    recorded: str | None


def record_rows(dist: metadata.Distribution) -> list[tuple[str, str]]:
    """RECORD's (path, digest) rows, the digest "" where RECORD gives none."""
    text = dist.read_text("RECORD") or ""
    return [(row[0], row[1] if len(row) > 1 else "") for row in csv.reader(text.splitlines())]


def is_editable(dist: metadata.Distribution) -> bool:
    """Whether pip installed ``dist`` in editable mode (PEP 660, ``direct_url.json``)."""
    text = dist.read_text("direct_url.json")
    if not text:
        return False
    try:
        info = json.loads(text)
    except ValueError:
        return False
    return bool(isinstance(info, dict) and info.get("dir_info", {}).get("editable"))


def distribution_files(dist: metadata.Distribution, module: str) -> list[PluginFile]:
    """The files of ``dist`` the lock hashes, sorted by key; ``module`` is the entry
    point's module (its top-level package is what an editable install's source adds)."""
    files: dict[str, PluginFile] = {}
    rows = record_rows(dist)
    for key, digest in rows:
        if not digest or _outside(key) or _installer_file(key):
            continue
        files[key] = PluginFile(key, located(dist, key), digest)
    if is_editable(dist):
        top = module.split(":")[0].split(".")[0]
        for root in _editable_roots(dist, rows, top):
            for path in _package_files(root, top):
                key = path.relative_to(root).as_posix()
                files.setdefault(key, PluginFile(key, path, None))
    return [files[k] for k in sorted(files)]


def module_among_files(dist: metadata.Distribution, module: str) -> bool:
    """Whether the entry point's ``module`` is one of ``dist``'s own files (RECORD's, or
    for an editable install the source its ``.pth`` names), found without importing it."""
    dotted = module.split(":")[0].strip()
    stem = dotted.replace(".", "/")
    candidates = (f"{stem}.py", f"{stem}/__init__.py")
    keys = {f.key for f in distribution_files(dist, dotted)}
    if any(c in keys for c in candidates):
        return True
    # A compiled module: modelplug_x/fast.cpython-311-x86_64-linux-gnu.so
    return any(k.startswith(f"{stem}.") and k.endswith((".so", ".pyd")) for k in keys)


def executable_lines(text: str) -> list[str]:
    """The lines of a ``.pth`` file that Python runs at startup (``site`` executes a line
    that starts with ``import`` followed by a space or a tab)."""
    return [line for line in text.splitlines() if line.startswith(("import ", "import\t"))]


def _outside(key: str) -> bool:
    return key.startswith(("/", "../")) or ":" in key.split("/")[0]


def _installer_file(key: str) -> bool:
    parts = key.split("/")
    return len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] in INSTALLER_FILES


def _editable_roots(
    dist: metadata.Distribution, rows: list[tuple[str, str]], top: str
) -> list[Path]:
    """The source directories an editable install adds: path lines of its ``.pth``
    files, and the directory a setuptools finder maps ``top`` to."""
    roots: list[Path] = []
    for key, _ in rows:
        if key.count("/") or _outside(key):
            continue
        path = located(dist, key)
        if key.endswith(".pth"):
            for line in _read(path).splitlines():
                line = line.strip()
                if line and not line.startswith("#") and not executable_lines(line):
                    roots.append(Path(line))
        elif key.endswith("_finder.py"):
            mapped = _finder_mapping(_read(path)).get(top)
            if mapped:
                roots.append(Path(mapped).parent)
    return [r for r in roots if r.is_dir()]


def _finder_mapping(source: str) -> dict[str, str]:
    """The ``MAPPING = {...}`` literal of a setuptools editable finder, read, not run."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    for node in tree.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and target.id == "MAPPING" and value is not None:
            try:
                mapping = ast.literal_eval(value)
            except ValueError:
                return {}
            if isinstance(mapping, dict):
                return {str(k): str(v) for k, v in mapping.items()}
    return {}


def _package_files(root: Path, top: str) -> list[Path]:
    single = root / f"{top}.py"
    if single.is_file():
        return [single]
    package = root / top
    out: list[Path] = []
    for directory, subdirs, names in os.walk(package):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        out += [Path(directory, n) for n in names if not n.endswith((".pyc", ".pyo"))]
    return out


def located(dist: metadata.Distribution, key: str) -> Path:
    """Where a RECORD path of ``dist`` is on disk."""
    return Path(str(dist.locate_file(key)))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
