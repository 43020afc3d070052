"""Writing the plugin lock (``modelplug.lock``): each plugin's entry as installed now, as
TOML that reads well in a diff. Reading and checking it is the host's
(:mod:`modelplug.host.plugin_lock`)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from modelplug.host.file_digests import sha256_of
from modelplug.host.plugin_files import distribution_files, is_editable, record_rows
from modelplug.host.plugin_lock import LockedPlugin, canonical_name

__all__ = ["combined_digest", "entry_point_text", "lock_text", "snapshot", "write_lock"]


def entry_point_text(ep: metadata.EntryPoint) -> str:
    """An entry point as the lock holds it: ``name = module``."""
    return f"{ep.name} = {ep.value}"


def combined_digest(files: dict[str, str]) -> str:
    """One sha256 over a plugin's files: over the sorted ``<key> <sha256>`` lines."""
    import hashlib

    text = "".join(f"{key} {files[key]}\n" for key in sorted(files))
    return hashlib.sha256(text.encode()).hexdigest()


def lock_text(plugins: Iterable[LockedPlugin]) -> str:
    """The lock file for ``plugins``: stable order, one line per file, for diffs."""
    q = _quote
    lines = [
        "# The plugins this project runs: written by `modelplug plugins lock`, checked at",
        "# every start when [plugins] lock names this file. Review a change to it as you",
        "# review code: a changed digest is changed code.",
        "version = 1",
    ]
    for plugin in sorted(plugins, key=lambda p: canonical_name(p.name)):
        lines += [
            "",
            f"[plugins.{q(plugin.name)}]",
            f"version = {q(plugin.version)}",
            f"entry_point = {q(plugin.entry_point)}",
            f"editable = {'true' if plugin.editable else 'false'}",
            f"sha256 = {q(plugin.sha256)}",
            "",
            f"[plugins.{q(plugin.name)}.files]",
            *(f"{q(key)} = {q(plugin.files[key])}" for key in sorted(plugin.files)),
        ]
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text)


def snapshot(
    dist: metadata.Distribution, ep: metadata.EntryPoint
) -> tuple[LockedPlugin, list[str]]:
    """The lock entry for an installed plugin as it is now, with notes on files that no
    longer match RECORD's own digest or are gone (locked as they are, and named)."""
    files: dict[str, str] = {}
    notes: list[str] = []
    record = dict(record_rows(dist))
    for found in distribution_files(dist, ep.value, []):
        digest = sha256_of(found.path)
        if digest is None:
            notes.append(f"{dist.name}: {found.key} is listed in RECORD but missing")
            continue
        files[found.key] = digest
        recorded = record.get(found.key, "")
        if recorded.startswith("sha256=") and _record_hex(recorded) != digest:
            notes.append(f"{dist.name}: {found.key} no longer matches its RECORD digest")
    locked = LockedPlugin(
        name=dist.name,
        version=dist.version,
        entry_point=entry_point_text(ep),
        editable=is_editable(dist),
        sha256=combined_digest(files),
        files=files,
    )
    return locked, notes


def write_lock(path: Path, plugins: Iterable[LockedPlugin]) -> None:
    """Write the lock file (through a temporary file, so a reader never sees half)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(lock_text(plugins), encoding="utf-8")
    os.replace(partial, path)


def _record_hex(recorded: str) -> str:
    """RECORD's ``sha256=<urlsafe base64, no padding>`` as hex."""
    import base64

    value = recorded.removeprefix("sha256=")
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()
    except ValueError:
        return ""
