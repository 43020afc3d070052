"""``modelplug plugins lock``: write the plugin lock for the plugins enabled here."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from modelplug.cli.lock_writer import snapshot, write_lock
from modelplug.contract.settings import Settings
from modelplug.host.plugin_lock import (
    LOCK_FILE_NAME,
    LockedPlugin,
    canonical_name,
    lock_setting,
    read_lock,
)

if TYPE_CHECKING:
    from modelplug.client.client import Client

__all__ = ["enabled_entry_points", "lock_path", "relock", "run"]


def lock_path(settings: Settings) -> tuple[Path, bool]:
    """The lock file to write, and whether a setting names it (else: beside the project
    file, or in the current directory when there is none)."""
    setting = lock_setting(settings)
    if setting is not None:
        return setting.path, True
    return (settings.project_dir or Path.cwd()) / LOCK_FILE_NAME, False


def enabled_entry_points(client: Client) -> list[metadata.EntryPoint]:
    """The installed plugins the toggles enable (whatever the lock says of them)."""
    seen: set[str] = set()
    out = []
    for ep in sorted(metadata.entry_points(group="modelplug"), key=lambda e: e.name):
        if ep.name in seen or ep.dist is None:
            continue
        seen.add(ep.name)
        if client.host.decide(ep.name, "entry point")[0]:
            out.append(ep)
    return out


def relock(client: Client, only: Iterable[str] | None = None) -> tuple[Path, list[str]]:
    """Write the lock: every enabled plugin as installed now, or with ``only``, just
    those distributions (the rest kept as the lock held them). Prints what it locked
    and returns the path and the notes (files that no longer match RECORD)."""
    path, _ = lock_path(client.settings)
    wanted = {canonical_name(n) for n in only} if only is not None else None
    entries: dict[str, LockedPlugin] = {} if wanted is None else read_lock(path)
    notes: list[str] = []
    for ep in enabled_entry_points(client):
        dist = ep.dist
        name = canonical_name(dist.name) if dist is not None else ""
        if dist is None or (wanted is not None and name not in wanted):
            continue
        entries[name], found = snapshot(dist, ep)
        notes += found
        print(f"  {dist.name} {dist.version} ({len(entries[name].files)} files)")
    write_lock(path, entries.values())
    return path, notes


def run(args: argparse.Namespace, client: Client) -> int:
    path, named = lock_path(client.settings)
    print(f"locking the enabled plugins in {path}:")
    path, notes = relock(client)
    for note in notes:
        print(f"note: {note} (locked as it is now)", file=sys.stderr)
    if not named:
        print(
            f'to check it at every start, set [plugins] lock = "{LOCK_FILE_NAME}" in the '
            "project file (or MODELPLUG_PLUGIN_LOCK)"
        )
    return 0
