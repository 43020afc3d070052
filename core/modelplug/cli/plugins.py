"""``modelplug plugins`` and ``--version``: what is installed and why each is on or off;
``modelplug plugins lock`` and ``audit`` (:mod:`~modelplug.cli.plugin_lock`,
:mod:`~modelplug.cli.plugin_audit`)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from modelplug.cli import plugin_audit, plugin_lock

if TYPE_CHECKING:
    from modelplug.client.client import Client

__all__ = ["add_parser", "run", "version"]


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    plugins = sub.add_parser("plugins", help="list plugins and why each is on or off")
    plugins.add_argument("--all", action="store_true", help="include built-in plugins")
    plugins.add_argument("--json", action="store_true", help="print JSON")
    plugins.set_defaults(handler=run)
    actions = plugins.add_subparsers(dest="plugins_command", metavar="ACTION")
    lock = actions.add_parser(
        "lock",
        help="write the plugin lock: each enabled plugin's version, entry point and files",
        description=(
            "Write modelplug.lock (where [plugins] lock or MODELPLUG_PLUGIN_LOCK says, else "
            "beside the project file): each enabled plugin's distribution, version, entry "
            "point and a sha256 over its files. With [plugins] lock set, a plugin that "
            "differs from it is not loaded."
        ),
    )
    lock.set_defaults(handler=plugin_lock.run)
    audit = actions.add_parser(
        "audit",
        help="list .pth files that run code, unlocked or changed plugins (exit 1 if any)",
        description=(
            "List .pth files with an executable line and who installed them, plugins the "
            "lock does not hold, entry points whose module is not their distribution's, and "
            "locked plugins whose files changed. Exit status 1 when it finds anything."
        ),
    )
    audit.add_argument("--json", action="store_true", help="print JSON")
    audit.add_argument(
        "--allow-pth",
        action="append",
        default=[],
        metavar="NAME",
        help="do not report the .pth files of this distribution (repeatable)",
    )
    audit.set_defaults(handler=plugin_audit.run)


def run(args: argparse.Namespace, client: Client) -> int:
    infos = [p for p in client.plugins() if args.all or p.source != "builtin"]
    if args.json:
        print(json.dumps([p.as_dict() for p in infos], indent=2))
        return 0
    if not infos:
        print("no plugins installed (core's built-ins: modelplug plugins --all)")
        return 0
    width = max(len(p.name) for p in infos)
    for p in infos:
        state = "on " if p.enabled else "off"
        version = p.version or "-"
        line = f"{state} {p.name:<{width}}  {version:<10} {p.source:<12} {p.reason}"
        if p.hooks:
            line += f"\n    hooks: {', '.join(h.removeprefix('modelplug_') for h in p.hooks)}"
        if p.error:
            line += f"\n    error: {p.error}"
        print(line)
    return 0


def version() -> int:
    """Core's version and each installed plugin's."""
    from importlib.metadata import entry_points
    from importlib.metadata import version as installed

    print(f"modelplug {installed('modelplug')}")
    for ep in sorted(entry_points(group="modelplug"), key=lambda e: e.name):
        dist = ep.dist
        print(f"{ep.name} {dist.version if dist is not None else 'unknown'}")
    return 0
