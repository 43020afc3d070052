"""``modelplug gateway ...``: the ``gateway`` parser and its subcommands.

``serve`` is here; another part adds its own subcommands by providing a module in
:data:`EXTENSIONS` with ``add_commands(subparsers)`` (``keys_cli`` adds ``keys``)."""

from __future__ import annotations

import argparse
import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from modelplug import Client

__all__ = ["EXTENSIONS", "add_commands", "is_loopback_host"]

EXTENSIONS = ("keys_cli",)
"""Modules of this package that add ``gateway`` subcommands when present."""


def is_loopback_host(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def add_commands(subparsers: argparse._SubParsersAction[Any]) -> None:
    gateway = subparsers.add_parser(
        "gateway", help="an OpenAI- and Anthropic-compatible HTTP gateway to every provider"
    )
    commands = gateway.add_subparsers(dest="gateway_command", metavar="COMMAND")
    gateway.set_defaults(handler=lambda args, client: _usage(gateway))
    serve = commands.add_parser("serve", help="run the gateway ([gateway] in your user file)")
    serve.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default 4000)")
    serve.add_argument("--workers", type=int, help="worker processes (default 1)")
    serve.add_argument(
        "--server",
        choices=("uvicorn", "granian"),
        help="the ASGI server (default uvicorn; granian: pip install 'modelplug-gateway[granian]')",
    )
    serve.add_argument(
        "--no-auth", action="store_true", help="admit every caller (loopback hosts only)"
    )
    serve.set_defaults(handler=_serve)
    for name in EXTENSIONS:
        try:
            module = importlib.import_module(f"{__package__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{name}":
                raise
            continue
        module.add_commands(commands)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _serve(args: argparse.Namespace, client: Client) -> int:
    import sys

    from modelplug import ConfigError

    from .server import serve
    from .settings import read_gateway

    overrides = {k: getattr(args, k) for k in ("host", "port", "workers", "server")}
    try:
        options = read_gateway(client.settings, {k: v for k, v in overrides.items() if v})
    except ConfigError as exc:
        print(f"modelplug gateway: {exc}", file=sys.stderr)
        return 2
    if args.no_auth and not is_loopback_host(options.host):
        print(
            f"modelplug gateway: --no-auth is refused on {options.host}: anyone who can "
            "reach it could spend your keys; use a loopback host (127.0.0.1) or a key",
            file=sys.stderr,
        )
        return 2
    if not args.no_auth and options.auth == "key" and not client.settings.getenv(options.key_env):
        where = _keys_waiting(client)
        if where is not None:
            # The operator made virtual keys and started the server as for one key of
            # their own: the plain "set the key" message would hide which fix they want.
            user_file = client.settings.user_path or "your settings file"
            print(
                f"modelplug gateway: the gateway needs a key: the virtual keys in {where} "
                f'are admitted with [gateway] auth = "keys" in {user_file} (modelplug '
                f"gateway keys list shows them); or set {options.key_env} (or [gateway] "
                "key_env) for one key of your own",
                file=sys.stderr,
            )
            return 2
    return serve(options, no_auth=args.no_auth)


def _keys_waiting(client: Client) -> str | None:
    """Where the virtual key store is when it holds keys; None when it holds none, or
    cannot say now (the plain message is the one to give then)."""
    import asyncio
    from pathlib import Path

    from .keys import open_store
    from .keys.sqlite_store import SqliteKeys

    store = open_store(client)
    if isinstance(store, SqliteKeys) and not Path(store.where).exists():
        return None  # never made: no key was ever created here (and none is made now)

    async def look() -> bool:
        try:
            return await store.has_keys()
        finally:
            await client.aclose()  # the store's connections, before the server starts

    try:
        found = asyncio.run(look())
    except Exception:  # a store that cannot be read now: let serve() say what it says
        return None
    return store.where if found else None
