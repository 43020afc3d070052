"""``modelplug new-plugin NAME [DIRECTORY]``: start a provider plugin from the template."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from modelplug.client.client import Client

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    new = sub.add_parser(
        "new-plugin",
        help="write a provider plugin to start from (docs/writing-a-provider.md), tests included",
    )
    new.add_argument(
        "name", help="the provider type, e.g. acme or my-api (modelplug-acme means acme)"
    )
    new.add_argument("directory", nargs="?", default=".", help="where to write it (default: here)")
    new.set_defaults(handler=run)


def run(args: argparse.Namespace, client: Client) -> int:
    from modelplug.cli.scaffold import create

    try:
        target = create(args.name, Path(args.directory))
    except ValueError as exc:
        print(f"modelplug: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {target}: cd {target} && pip install -e '.[test]' && pytest")
    return 0
