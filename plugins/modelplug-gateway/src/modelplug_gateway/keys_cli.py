"""``modelplug gateway keys create|list|revoke|rotate``: the operator's virtual keys.

A key is printed once, by ``create`` and ``rotate``; the store keeps only its keyed hash,
so a lost key is rotated, never shown again."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from modelplug import Client

    from .keys import KeyRecord

__all__ = ["add_commands"]

NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.@")


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    keys = commands.add_parser("keys", help="virtual keys: create, list, revoke, rotate")
    sub = keys.add_subparsers(dest="keys_command", metavar="COMMAND")
    keys.set_defaults(handler=lambda args, client: _usage(keys))

    create = sub.add_parser("create", help="make a key (printed once)")
    create.add_argument("name", help="the key's name (letters, digits, - _ . @)")
    create.add_argument("--budget", help="USD per period (e.g. 5.00)")
    create.add_argument("--period", choices=("day", "week", "month", "total"), default="month")
    create.add_argument("--rpm", type=int, help="requests per minute")
    create.add_argument("--tpm", type=int, help="tokens per minute")
    create.add_argument("--models", help="comma-separated specs, aliases or roles it may call")
    create.add_argument("--expires", help="date (YYYY-MM-DD, UTC) or ISO time it stops working")
    create.set_defaults(handler=lambda args, client: _run(_create(args, client)))

    listing = sub.add_parser("list", help="names, limits and spend so far (never the keys)")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=lambda args, client: _run(_list(args, client)))

    revoke = sub.add_parser("revoke", help="refuse a key from now on")
    revoke.add_argument("name")
    revoke.set_defaults(handler=lambda args, client: _run(_revoke(args, client)))

    rotate = sub.add_parser("rotate", help="a new key for a name (the old one stops working)")
    rotate.add_argument("name")
    rotate.set_defaults(handler=lambda args, client: _run(_rotate(args, client)))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


class Usage(Exception):
    """A mistake in the command line: said on stderr, exit status 2."""


def _run(work: Any) -> int:
    from modelplug import ModelplugError

    from .keys import KeyExistsError, NoSuchKeyError

    try:
        return int(asyncio.run(work))
    except Usage as exc:
        print(f"modelplug gateway keys: {exc}", file=sys.stderr)
        return 2
    except KeyExistsError as exc:
        print(f"modelplug gateway keys: a key named {exc} exists already", file=sys.stderr)
        return 1
    except NoSuchKeyError as exc:
        print(f"modelplug gateway keys: no key named {exc}", file=sys.stderr)
        return 1
    except ModelplugError as exc:
        print(f"modelplug gateway keys: {exc}", file=sys.stderr)
        return 1


def _parse_expires(text: str) -> float:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise Usage(f"--expires: expected a date such as 2027-01-31, got {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _parse_budget(text: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise Usage(f"--budget: expected an amount in USD such as 5.00, got {text!r}") from None
    if not value.is_finite() or value < 0:
        raise Usage("--budget: expected a positive amount in USD")
    return value


async def _create(args: argparse.Namespace, client: Client) -> int:
    from .keys import KeyRecord, hasher_for, new_key, open_store

    if not args.name or not set(args.name) <= NAME_CHARS or len(args.name) > 64:
        raise Usage("a key's name is 1-64 letters, digits and - _ . @ (it labels metrics)")
    for flag in ("rpm", "tpm"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            raise Usage(f"--{flag}: expected a whole number of at least 1")
    models = tuple(m.strip() for m in (args.models or "").split(",") if m.strip())
    hasher = hasher_for(client)
    key = new_key(hasher)
    record = KeyRecord(
        name=args.name,
        hash=hasher.digest(key),
        budget=None if args.budget is None else _parse_budget(args.budget),
        period=args.period,
        rpm=args.rpm,
        tpm=args.tpm,
        models=models,
        expires=None if args.expires is None else _parse_expires(args.expires),
        created=time.time(),
    )
    await open_store(client).add(record)
    print(key)
    print(
        f"key {record.name!r} made; it is shown only now: keep it somewhere safe", file=sys.stderr
    )
    return 0


async def _revoke(args: argparse.Namespace, client: Client) -> int:
    from .keys import NoSuchKeyError, open_store

    store = open_store(client)
    record = await store.named(args.name)
    if record is None:
        raise NoSuchKeyError(args.name)
    await store.replace(record, record.with_changes(revoked=True))
    print(f"key {record.name!r} revoked", file=sys.stderr)
    return 0


async def _rotate(args: argparse.Namespace, client: Client) -> int:
    from .keys import NoSuchKeyError, hasher_for, new_key, open_store

    store = open_store(client)
    record = await store.named(args.name)
    if record is None:
        raise NoSuchKeyError(args.name)
    hasher = hasher_for(client)
    key = new_key(hasher)
    await store.replace(record, record.with_changes(hash=hasher.digest(key), revoked=False))
    print(key)
    print(f"key {record.name!r} rotated: the old key no longer works", file=sys.stderr)
    return 0


async def _list(args: argparse.Namespace, client: Client) -> int:
    rows = await key_rows(client)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no keys (make one with: modelplug gateway keys create NAME)")
        return 0
    header = ("name", "state", "budget", "spent", "rpm", "tpm", "models", "expires")
    table = [header] + [
        (
            r["name"],
            r["state"],
            "-" if r["budget"] is None else f"{r['budget']} USD/{r['period']}",
            "-" if r["spent"] is None else f"{r['spent']} USD",
            str(r["rpm"] or "-"),
            str(r["tpm"] or "-"),
            ",".join(r["models"]) or "any",
            r["expires"] or "-",
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
    return 0


async def key_rows(client: Client) -> list[dict[str, Any]]:
    """Every key as ``keys list`` shows it: name, state, limits, this period's spend."""
    from modelplug_kit import from_nano, period_window
    from modelplug_limits import counter_store_for

    from .key_gate import spend_key
    from .keys import open_store

    records = list(await open_store(client).all())
    now = time.time()
    budgeted = [r for r in records if r.budget is not None]
    spent: dict[str, Decimal] = {}
    if budgeted:
        counters = counter_store_for(client)
        names = [spend_key(r.name, period_window(r.period, now)[0]) for r in budgeted]
        found = await counters.read(names)
        for record, value in zip(budgeted, found, strict=True):
            spent[record.name] = from_nano(value[0] if value else 0)
    return [_row(r, spent.get(r.name), now) for r in records]


def _row(record: KeyRecord, spent: Decimal | None, now: float) -> dict[str, Any]:
    state = "revoked" if record.revoked else "expired" if not record.usable(now) else "active"
    expires = None
    if record.expires is not None:
        expires = datetime.fromtimestamp(record.expires, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "name": record.name,
        "state": state,
        "budget": None if record.budget is None else f"{record.budget:f}",
        "period": record.period,
        "spent": None if spent is None else f"{spent:f}",
        "rpm": record.rpm,
        "tpm": record.tpm,
        "models": list(record.models),
        "expires": expires,
    }
