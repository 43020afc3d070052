"""``modelplug resolve`` and ``modelplug price``: the route a spec resolves to, and
what a number of tokens costs on it."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from modelplug.cli.output import money

if TYPE_CHECKING:
    from modelplug.client.client import Client
    from modelplug.contract.routes import Route

__all__ = ["add_parsers", "price", "resolve"]


def add_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    resolve_parser = sub.add_parser("resolve", help="show the route a spec resolves to")
    resolve_parser.add_argument(
        "spec", nargs="?", default=None, help="provider/model, an alias or a role"
    )
    resolve_parser.add_argument("--json", action="store_true", help="print JSON")
    resolve_parser.add_argument(
        "--probe", action="store_true", help="ask the server what it serves"
    )
    resolve_parser.set_defaults(handler=resolve)

    price_parser = sub.add_parser("price", help="price a number of tokens on a model")
    price_parser.add_argument("spec", help="provider/model, an alias or a role")
    price_parser.add_argument("--input", type=int, required=True, help="uncached input tokens")
    price_parser.add_argument("--output", type=int, required=True, help="output tokens")
    price_parser.add_argument("--cache-read", type=int, default=0, help="cache-read tokens")
    price_parser.add_argument("--cache-write", type=int, default=0, help="cache-write tokens")
    price_parser.add_argument("--web-searches", type=int, default=0, help="web searches")
    price_parser.add_argument(
        "--batch", action="store_true", help="batch pricing (half the tokens)"
    )
    price_parser.set_defaults(handler=price)


def _alternatives(client: Client, route: Route) -> list[dict[str, str]]:
    """The other plugins that declare the route's provider name, and their types."""
    declared = client.declared_providers().get(route.provider, [])
    return [
        {"plugin": plugin, "type": entry.type}
        for entry, plugin in declared
        if plugin != route.plugin or entry.type != route.endpoint.type
    ]


def _policies(client: Client, route: Route) -> dict[str, dict[str, Any]]:
    """What each plugin applies to a call on ``route`` now (``modelplug_describe_route``:
    a fallback chain and its cooldowns, the limits and budgets that count it), by name."""
    waiting = client.hook.modelplug_describe_route(route=route, client=client)

    async def sections() -> list[dict[str, Any]]:
        return [await each for each in waiting if each is not None]

    found = client._run_sync(sections())
    return {s["section"]: s for s in sorted(found, key=lambda s: str(s["section"]))}


def resolve(args: argparse.Namespace, client: Client) -> int:
    # The probe first: what it learns is the route's from now on (the window it gives
    # replaces the plugin's guess, whose note then goes).
    probed = client.probe(args.spec) if args.probe else None
    route = client.resolve(args.spec)
    data = route.public_dict()
    data["alternatives"] = _alternatives(client, route)
    if args.probe:
        data["probe"] = probed.public_dict() if probed is not None else None
    policies = _policies(client, route)
    data["policies"] = {
        name: {k: v for k, v in section.items() if k not in ("section", "lines")}
        for name, section in policies.items()
    }
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"{route.name}  (from {route.spec!r}{', role ' + route.role if route.role else ''})")
    endpoint = route.endpoint
    print(f"  served by: {route.plugin or 'unknown'}")
    for other in data["alternatives"]:
        print(f"  also declared by: {other['plugin']} (type {other['type']})")
    print(f"  endpoint: {endpoint.type} {endpoint.base_url or '(default)'}")
    if endpoint.server:
        print(f"  server: {endpoint.server}")
    if endpoint.api_key_env:
        print(f"  key variable: {endpoint.api_key_env}")
    info = route.info
    print(f"  context window: {info.context_window or 'unknown'}")
    print(f"  max output: {info.max_output_tokens or 'unknown'}")
    if info.supports_tools is not None:
        print(f"  tools: {'yes' if info.supports_tools else 'no'}")
    if info.text_tool_calls:
        print(f"  text tool calls: {info.text_tool_calls}")
    if info.price is not None:
        p = info.price
        print(f"  price (USD/M): input {p.input} output {p.output} ({info.price_source})")
    for note in info.notes:
        if probed is not None and "--probe" in note:
            continue  # the probe ran: its answer is below
        print(f"  note: {note}")
    if args.probe:
        if probed is None:
            print("  probe: this provider cannot be probed")
        else:
            print(f"  probe: context window {probed.context_window or 'unknown'}", end="")
            if probed.supports_tools is not None:
                print(f", tools {'yes' if probed.supports_tools else 'no'}", end="")
            if probed.thinking is not None:
                print(f", thinking {probed.thinking}", end="")
            if probed.supports_images is not None:
                print(f", images {'yes' if probed.supports_images else 'no'}", end="")
            print()
            for note in probed.notes:  # what the server said beyond the fields above
                print(f"  probe: {note}")
    for name, section in policies.items():
        print(f"  {name}:")
        for line in section["lines"]:
            print(f"    {line}")
    return 0


def price(args: argparse.Namespace, client: Client) -> int:
    for name in ("input", "output", "cache_read", "cache_write", "web_searches"):
        if getattr(args, name) < 0:
            print(f"modelplug: --{name.replace('_', '-')} must not be negative", file=sys.stderr)
            return 2
    from modelplug.contract.types import Usage

    route = client.resolve(args.spec)
    usage = Usage(
        input=args.input,
        output=args.output,
        cache_read=args.cache_read,
        cache_write=args.cache_write,
        web_searches=args.web_searches,
    )
    factor = 0.5 if args.batch else 1.0
    cost = client.price(route, usage, factor)
    if cost is None:
        tables = [
            p.name
            for p in client.plugins()
            if p.enabled and p.source != "builtin" and "modelplug_price" in p.hooks
        ]
        where = (
            f"no pricing table knows it ({', '.join(tables)})" if tables else _no_pricing(client)
        )
        print(
            f"{route.name}: price unknown: {where}. Set one in your settings file, in USD "
            f"per million tokens:\n"
            f'  [models."{route.name}"]\n'
            "  price = { input = 3.0, output = 15.0, cache_read = 0.3, cache_write = 3.75 }"
        )
        return 0
    print(f"{route.name}{' (batch)' if args.batch else ''}  [{cost.source}]")
    for kind, amount in cost.breakdown.items():
        print(f"  {kind:<12} {money(amount, cost.currency)}")
    print(f"  {'total':<12} {money(cost.amount, cost.currency)}")
    return 0


def _no_pricing(client: Client) -> str:
    from modelplug.host.known_providers import PRICING_DISTRIBUTION

    info = next((p for p in client.plugins() if p.name == PRICING_DISTRIBUTION), None)
    if info is not None and not info.enabled:
        return (
            f"no pricing plugin is enabled ({PRICING_DISTRIBUTION} is installed but {info.reason})"
        )
    return f"no pricing plugin is enabled (pip install {PRICING_DISTRIBUTION})"
