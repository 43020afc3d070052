"""``modelplug plugins audit``: what in this Python environment could run code modelplug
did not lock, for people and for CI (exit status 1 when it finds anything).

It lists ``.pth`` files with an executable line (and who installed each), plugins the
lock does not hold, entry points whose module is not among their distribution's own
files, and locked plugins whose files changed (hashed afresh: the audit never trusts the
digest cache). ``--json`` prints ``{"lock": PATH|null, "lock_checked": BOOL,
"findings": [{"kind": ..., ...}]}`` (the kinds are in docs/configuration.md).
"""

from __future__ import annotations

import argparse
import json
from importlib import metadata
from typing import TYPE_CHECKING, Any

from modelplug.cli.pth_audit import executable_pth_files, module_among_files
from modelplug.contract.secrets import redact
from modelplug.host.plugin_lock import canonical_name, differences, lock_setting, read_lock

if TYPE_CHECKING:
    from modelplug.client.client import Client

__all__ = ["findings", "run"]

LINE_SHOWN = 100


def _plugins() -> list[metadata.EntryPoint]:
    seen: set[str] = set()
    out = []
    for ep in sorted(metadata.entry_points(group="modelplug"), key=lambda e: e.name):
        if ep.name not in seen:
            seen.add(ep.name)
            out.append(ep)
    return out


def findings(client: Client, allow_pth: set[str]) -> tuple[str | None, list[dict[str, Any]]]:
    """The lock's path (None when no lock is set) and what the audit found."""
    found: list[dict[str, Any]] = []
    for pth in executable_pth_files():
        if pth.distribution and canonical_name(pth.distribution) in allow_pth:
            continue
        line = redact(pth.first_line)
        found.append(
            {
                "kind": "pth",
                "path": str(pth.path),
                "distribution": pth.distribution,
                "line": line[:LINE_SHOWN] + ("..." if len(line) > LINE_SHOWN else ""),
            }
        )
    plugins = _plugins()
    for ep in plugins:
        if ep.dist is not None and not module_among_files(ep.dist, ep.value):
            found.append(
                {
                    "kind": "foreign_module",
                    "distribution": ep.dist.name,
                    "entry_point": ep.name,
                    "module": ep.value,
                }
            )
    setting = lock_setting(client.settings)
    if setting is None:
        return None, found
    locked = read_lock(setting.path)
    installed: set[str] = set()
    for ep in plugins:
        dist = ep.dist
        if dist is None:
            continue
        name = canonical_name(dist.name)
        installed.add(name)
        entry = locked.get(name)
        if entry is None:
            found.append({"kind": "not_locked", "distribution": dist.name, "version": dist.version})
            continue
        changed = differences(entry, dist, ep, [])
        if changed:
            found.append({"kind": "changed", "distribution": dist.name, "differences": changed})
    for name, entry in sorted(locked.items()):
        if name not in installed:
            found.append({"kind": "removed", "distribution": entry.name, "version": entry.version})
    return str(setting.path), found


TITLES = {
    "pth": ".pth files that run code at every Python start",
    "foreign_module": "entry points whose module is not among their distribution's files",
    "not_locked": "plugins the lock does not hold",
    "changed": "locked plugins that changed since the lock",
    "removed": "locked plugins no longer installed",
}


def _describe(item: dict[str, Any]) -> str:
    kind = item["kind"]
    if kind == "pth":
        owner = item["distribution"] or "no distribution"
        return f"{item['path']} ({owner}): {item['line']}"
    if kind == "foreign_module":
        return f"{item['distribution']}: entry point {item['entry_point']} -> {item['module']}"
    if kind == "changed":
        return f"{item['distribution']}: {', '.join(item['differences'])}"
    return f"{item['distribution']} {item['version']}"


def run(args: argparse.Namespace, client: Client) -> int:
    allow = {canonical_name(n) for n in args.allow_pth}
    lock, found = findings(client, allow)
    if args.json:
        print(json.dumps({"lock": lock, "lock_checked": lock is not None, "findings": found}))
        return 1 if found else 0
    if lock is None:
        print(
            "no plugin lock is set ([plugins] lock or MODELPLUG_PLUGIN_LOCK): skipped the "
            "checks against the lock"
        )
    else:
        print(f"plugin lock: {lock}")
    for kind, title in TITLES.items():
        items = [i for i in found if i["kind"] == kind]
        if items:
            print(f"{title}:")
            for item in items:
                print(f"  {_describe(item)}")
    print(f"{len(found)} finding{'s' if len(found) != 1 else ''}" if found else "nothing found")
    return 1 if found else 0
