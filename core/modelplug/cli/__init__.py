"""The ``modelplug`` command: the parser, the entry point and its one rule for exit codes.

Exit codes: 0 ok; 1 the call failed (the model or provider answered with an error, or a
plugin broke); 2 what was given is wrong (the command line, a settings file, the spec,
the request, a missing key); 141 the reader of stdout went away (``modelplug ... |
head``), quietly, as a command that SIGPIPE stops. Errors are one line, never a
traceback.

Each command group is its own module (``chat``, ``config``, ``embed``, ``install``,
``models``, ``plugins``, ``resolve`` with ``price``, ``trust``, ``new_plugin``); plugins add
subcommands through the ``modelplug_cli_commands`` hook.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from modelplug.cli import (
    bench,
    budget,
    chat,
    config,
    count,
    embed,
    install,
    models,
    new_plugin,
    plugins,
    resolve,
    transcribe,
    trust,
)
from modelplug.cli.exit_code import exit_code
from modelplug.cli.trust import add_trusted_project
from modelplug.client.client import Client
from modelplug.contract.errors import ModelplugError, PluginLockError
from modelplug.contract.secrets import redact
from modelplug.contract.settings import ModelplugWarning
from modelplug.host.settings import load_settings

__all__ = ["add_trusted_project", "build_parser", "exit_code", "main"]

# What a shell reports for a command that SIGPIPE stopped (128 + 13): the exit status of
# `yes | head` in `set -o pipefail`. Python ignores SIGPIPE, so a closed stdout is an
# EPIPE here; the command ends as those commands do, with nothing on stderr.
CLOSED_PIPE = 141


def build_parser(client: Client | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="modelplug", description="A provider-neutral LLM client built on plugins."
    )
    parser.add_argument(
        "-V", "--version", action="store_true", help="print core's and each plugin's version"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    bench.add_parser(sub)
    budget.add_parser(sub)
    chat.add_parser(sub)
    config.add_parser(sub)
    count.add_parser(sub)
    embed.add_parser(sub)
    install.add_parser(sub)
    models.add_parser(sub)
    new_plugin.add_parser(sub)
    plugins.add_parser(sub)
    resolve.add_parsers(sub)
    transcribe.add_parser(sub)
    trust.add_parser(sub)
    if client is not None:
        client.hook.modelplug_cli_commands(subparsers=sub, client=client)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        code = _main(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()  # a closed pipe shows here, where it is handled
        return code
    except BrokenPipeError:
        # The reader went away (`modelplug --version | head -1`): stop quietly, and keep
        # the interpreter from failing again while it flushes stdout at exit (the recipe
        # of Python's signal module documentation).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return CLOSED_PIPE


def _main(args_list: list[str]) -> int:
    if args_list[:1] in (["--version"], ["-V"]):
        return plugins.version()
    warnings.showwarning = _show_warning
    warnings.simplefilter("default", ModelplugWarning)
    command = next((a for a in args_list if not a.startswith("-")), None)
    if command == "trust":
        # It is fixing exactly that: no "not trusted" warning while it does.
        warnings.filterwarnings("ignore", message=".*is not trusted", category=ModelplugWarning)
    try:
        client = Client()
    except PluginLockError as exc:
        if command not in ("plugins", "install"):
            print(f"modelplug: {exc}", file=sys.stderr)
            return exit_code(exc)
        # What fixes the refusal (lock, audit, install) reads metadata, not plugins.
        print(f"modelplug: warning: {exc}", file=sys.stderr)
        client = Client(entry_points=False)
    except ModelplugError as exc:
        print(f"modelplug: {exc}", file=sys.stderr)
        if command not in ("plugins", "config"):
            return exit_code(exc)
        # A broken settings file must not hide which plugins there are, nor stop you
        # from opening it to fix it.
        if command == "plugins":
            print("modelplug: listing plugins without the settings files", file=sys.stderr)
        client = Client(settings=load_settings(user_path=Path(os.devnull), use_project=False))
    parser = build_parser(client)
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:
        return int(exc.code or 0)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        code: int = args.handler(args, client)
        sys.stdout.flush()  # a closed pipe shows here, while the client is open
        return code
    except ModelplugError as exc:
        print(f"modelplug: {exc}", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        print("modelplug: interrupted", file=sys.stderr)
        return 130
    finally:
        try:
            client.close()
        except RuntimeError:
            pass


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """Every warning as one line, in modelplug's style, with no Python source line."""
    text = redact(str(message)).replace("\n", " ")
    if not text.startswith("modelplug: warning: "):
        text = f"modelplug: warning: {text}"
    print(text, file=file or sys.stderr)
