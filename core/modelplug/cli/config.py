"""``modelplug config path`` and ``modelplug config edit``: where the user's own
settings file is, and opening it in an editor (made first, owner-only, when missing)."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from modelplug.host.settings import user_config_path

if TYPE_CHECKING:
    from modelplug.client.client import Client

__all__ = ["STARTER", "add_parser", "create_user_file", "editor_command"]

# Commented out, every line: a starter that set anything would change what runs.
STARTER = """\
# modelplug's user settings: only this file may define providers, base URLs, headers
# and the variables keys are read from (a project's file cannot). Uncomment to use.

# The model a call uses when it names none:
# model = "llamacpp/any"

# A server on another address (the type, then where it listens):
# [providers.llamacpp]
# type = "openai-compatible"
# base_url = "http://127.0.0.1:8081/v1"

# What the server cannot tell (modelplug resolve --probe asks a local one):
# [models."llamacpp/any"]
# context_window = 8192
# structured_output = "tool"
"""


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    config = sub.add_parser("config", help="the user settings file: its path, or edit it")
    actions = config.add_subparsers(dest="config_action", metavar="ACTION")
    path = actions.add_parser("path", help="print the path of your user settings file")
    path.set_defaults(handler=print_path)
    edit = actions.add_parser(
        "edit", help="open your user settings file in $VISUAL or $EDITOR (created if missing)"
    )
    edit.set_defaults(handler=edit_file)
    config.set_defaults(handler=lambda args, client: _usage(config))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_usage(sys.stderr)
    print("modelplug: config takes an action: path or edit", file=sys.stderr)
    return 2


# Both actions read the path as the settings do (MODELPLUG_CONFIG, else the platform's
# config directory), not from the client: a file that fails to load is the very one
# `config edit` is run to fix.


def print_path(args: argparse.Namespace, client: Client) -> int:
    print(user_config_path())
    return 0


def edit_file(args: argparse.Namespace, client: Client) -> int:
    path = user_config_path()
    if create_user_file(path):
        print(f"created {path} (readable by you only)", file=sys.stderr)
    command = editor_command()
    try:
        # The editor owns the terminal until it exits; its code is the command's.
        done = subprocess.run([*command, str(path)], check=False)
    except OSError as exc:
        print(
            f"modelplug: could not start the editor {command[0]!r} ({exc.strerror}); "
            f"set VISUAL or EDITOR, or edit {path} yourself",
            file=sys.stderr,
        )
        return 1
    return 0 if done.returncode == 0 else 1


def create_user_file(path: Path) -> bool:
    """Write the starter at ``path`` unless a file is there; True when it was written.
    A new directory is 0700 and the file 0600: it names where keys are sent."""
    if path.exists():
        return False
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # O_EXCL: a file that appeared since the check is left alone, never overwritten.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(STARTER)
    return True


def editor_command() -> list[str]:
    """The editor to run, as words: ``$VISUAL``, else ``$EDITOR`` (either may hold
    options: ``code --wait``), else the platform's usual one."""
    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "").strip()
        if value:
            return shlex.split(value, posix=os.name != "nt")
    if os.name == "nt":
        return ["notepad"]
    if sys.platform == "darwin":
        return ["open", "-W", "-t"]  # the default text editor, waited for
    # Debian's choice of the user's editor, else the friendliest one installed.
    found = next((e for e in ("sensible-editor", "nano") if shutil.which(e)), "vi")
    return [found]
