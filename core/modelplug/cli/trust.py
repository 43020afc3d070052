"""``modelplug trust``: trust a project directory so its local plugins load."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modelplug.host.settings import user_config_path

if TYPE_CHECKING:
    from modelplug.client.client import Client

__all__ = ["add_parser", "add_trusted_project", "run"]


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    trust = sub.add_parser("trust", help="trust a project so its local plugins load")
    trust.add_argument(
        "directory", nargs="?", default=".", help="the project directory (default: here)"
    )
    trust.set_defaults(handler=run)


def run(args: argparse.Namespace, client: Client) -> int:
    directory = Path(args.directory).expanduser().resolve()
    if not directory.is_dir():
        print(f"modelplug: {directory} is not a directory", file=sys.stderr)
        return 2
    path = client.settings.user_path or user_config_path()
    add_trusted_project(path, directory)
    print(f"trusted {directory}: its project-local plugins will load (settings: {path})")
    return 0


def add_trusted_project(path: Path, directory: Path) -> None:
    """Add ``directory`` to ``trusted_projects`` in the user's settings file, keeping
    the rest of the file as it is."""
    import tomllib

    text = path.read_text(encoding="utf-8") if path.exists() else ""
    data = tomllib.loads(text) if text else {}
    trusted = [str(p) for p in data.get("trusted_projects", [])]
    if str(directory) in trusted:
        return
    trusted.append(str(directory))
    line = "trusted_projects = [" + ", ".join(json.dumps(p) for p in trusted) + "]\n"
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    skipping = False
    for raw in lines:
        stripped = raw.strip()
        if stripped.startswith("trusted_projects") and "=" in stripped:
            skipping = not stripped.rstrip().endswith("]")
            continue
        if skipping:
            skipping = not stripped.endswith("]")
            continue
        kept.append(raw)
    # Top-level keys must come before the first table.
    first_table = next((i for i, r in enumerate(kept) if r.lstrip().startswith("[")), len(kept))
    kept.insert(first_table, line)
    path.parent.mkdir(parents=True, exist_ok=True)
    new_text = "".join(kept)
    tomllib.loads(new_text)  # never write a file we could not read back
    path.write_text(new_text, encoding="utf-8")
