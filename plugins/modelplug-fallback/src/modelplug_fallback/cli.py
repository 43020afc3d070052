"""``modelplug cooldowns``: what cools down in the store every process shares (the
SQLite file of this machine, or Redis), and ``modelplug cooldowns clear [ROUTE]`` to
forget one cooldown or all of them (after fixing what made a model fail, say)."""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Coroutine
from inspect import isawaitable
from typing import TYPE_CHECKING, Any, TypeVar

from modelplug import ConfigError, ModelplugError

if TYPE_CHECKING:
    from modelplug import Client
    from modelplug_kit import AnyCooldownStore

__all__ = ["add_commands", "clear_cooldowns", "cooling", "show_cooldowns"]

T = TypeVar("T")


def add_commands(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = subparsers.add_parser(
        "cooldowns",
        help="the models cooling down in the cooldowns store; 'clear [ROUTE]' forgets them",
        description=(
            "List the cooldowns in the store the fallback policy uses ([fallback] store: "
            "this machine's SQLite file, or Redis with [redis] url), or clear one or all."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=lambda args, client: show_cooldowns(client, as_json=args.json))
    commands = parser.add_subparsers(dest="cooldowns_command", metavar="COMMAND")
    clear = commands.add_parser(
        "clear",
        help="forget the cooldown of ROUTE (provider/model, or a spec), or every cooldown",
    )
    clear.add_argument("route", nargs="?", help="provider/model or a spec; all when left out")
    clear.add_argument("--json", action="store_true", help="print JSON")
    clear.set_defaults(
        handler=lambda args, client: clear_cooldowns(client, args.route, as_json=args.json)
    )


def the_store(client: Client) -> AnyCooldownStore:
    """The store the entry point's policy uses on ``client`` (``[fallback] store``)."""
    from .policy import default_policy

    return default_policy().store_for(client)


async def cooling(store: AnyCooldownStore) -> dict[str, float]:
    """Every model cooling down in ``store`` now, and for how many more seconds.

    :raises ConfigError: the store cannot list its cooldowns (one of a program's own
        without a ``cooling()`` method).
    """
    listing = getattr(store, "cooling", None)
    if listing is None:
        raise ConfigError(
            f"the cooldown store {type(store).__name__} cannot list its cooldowns "
            "(it has no cooling() method)"
        )
    found = listing()
    if isawaitable(found):
        found = await found
    return {str(key): float(left) for key, left in dict(found).items() if left > 0}


def where(store: AnyCooldownStore) -> dict[str, str]:
    from .describe import store_text

    return {"store": type(store).__name__, "where": store_text(store)}


def show_cooldowns(client: Client, *, as_json: bool = False) -> int:
    store = the_store(client)
    now = run(client, cooling(store))
    if as_json:
        rows = [{"route": key, "remaining": round(left, 1)} for key, left in sorted(now.items())]
        print(json.dumps({**where(store), "cooldowns": rows}, indent=2))
        return 0
    if not now:
        print("nothing is cooling down")
    width = max(map(len, now), default=0)
    for key, left in sorted(now.items()):
        print(f"{key:<{width}}  cooling down for {round(left, 1):g} s more")
    shown = where(store)
    print(f"store: {shown['store']} ({shown['where']})")
    return 0


def clear_cooldowns(client: Client, route: str | None, *, as_json: bool = False) -> int:
    store = the_store(client)

    async def clear() -> tuple[list[str], str | None]:
        now = await cooling(store)
        if route is None:
            chosen = sorted(now)
        else:
            name = route if route in now else resolved_name(client, route)
            chosen = [name] if name in now else []
            if not chosen:
                # Nothing listed under that name: cleared all the same (a cooldown that
                # ended, or one no listing showed), so a script may always run this.
                await settled(store.clear(name))
                return [], name
        for key in chosen:
            await settled(store.clear(key))
        return chosen, None

    cleared, not_cooling = run(client, clear())
    if as_json:
        print(json.dumps({**where(store), "cleared": cleared}, indent=2))
        return 0
    if not_cooling is not None:
        print(f"{not_cooling} was not cooling down")
    elif not cleared:
        print("nothing was cooling down")
    else:
        print(f"cleared: {', '.join(cleared)}")
    shown = where(store)
    print(f"store: {shown['store']} ({shown['where']})")
    return 0


def resolved_name(client: Client, spec: str) -> str:
    """The ``provider/model`` a spec (an alias, a role) names; the spec itself when it
    does not resolve (a cooldown is kept by the route's name)."""
    try:
        return client.resolve(spec).name
    except ModelplugError:
        return spec


def run(client: Client, work: Coroutine[Any, Any, T]) -> T:
    """``work`` on a loop of its own, closing what it opened there (Redis's client)."""

    async def closing() -> T:
        try:
            return await work
        finally:
            await client.aclose()

    return asyncio.run(closing())


async def settled(result: object) -> None:
    if isawaitable(result):
        await result
