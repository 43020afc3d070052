"""modelplug-gateway: one HTTP endpoint that OpenAI and Anthropic clients call, in
front of every provider modelplug serves.

``modelplug gateway serve`` runs it (see the README). Importing this module costs
nothing: uvicorn and the app load when the server starts.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from modelplug import hookimpl

if TYPE_CHECKING:
    import argparse

    from modelplug import Client

__version__ = "2.0.0.dev0"
__all__ = ["modelplug_cli_commands", "modelplug_close"]


@hookimpl
def modelplug_cli_commands(subparsers: argparse._SubParsersAction[Any], client: Client) -> None:
    """``modelplug gateway``: ``serve`` (and the subcommands other parts add)."""
    from .cli import add_commands

    add_commands(subparsers)


@hookimpl
def modelplug_close(client: Client) -> None:
    """Close the connections to the SQLite keys file this process holds for ``client``
    (a gateway's, at its shutdown; a ``keys`` command's, when it ends)."""
    keys = sys.modules.get(f"{__name__}.keys")
    if keys is not None:  # never imported: no key was read or written
        keys.close_sqlite_keys(client)
