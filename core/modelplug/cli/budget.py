"""``modelplug budget -m MODEL``: the spend, limit and reset of the key the model's
provider sends, as its endpoint states them (LiteLLM's ``/key/info``, OpenRouter's
``/api/v1/key``, the modelplug gateway's ``/key/info``).

One line per fact on standard output, amounts in the currency the source names
(OpenRouter's ``credits`` are not called dollars); ``--json`` prints the KeyBudget as
JSON instead. Exit status 0: a budget; 3: the endpoint exposes no key budget (a line on
standard error says so); 1: the endpoint could not be reached; 2: a wrong model or a
missing key, as every command.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from modelplug.contract.errors import NoKeyBudgetError

if TYPE_CHECKING:
    from modelplug.client.client import Client
    from modelplug.contract.types import KeyBudget

__all__ = ["NO_BUDGET", "add_parser", "budget", "describe"]

#: The exit status when the endpoint exposes no key budget.
NO_BUDGET = 3


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "budget",
        help="show the key's spend, limit and reset, as the model's endpoint states them",
        description=(
            "Read the spend, limit and reset of the key MODEL's provider sends, from its "
            "endpoint (LiteLLM, OpenRouter, the modelplug gateway). Exit status 3: the "
            "endpoint exposes no key budget."
        ),
    )
    parser.add_argument("-m", "--model", default=None, help="provider/model, an alias or a role")
    parser.add_argument("--json", action="store_true", help="print the budget as JSON")
    parser.set_defaults(handler=budget)


def _amount(value: object, currency: str | None) -> str:
    return f"{value} {currency}" if currency else str(value)


def describe(found: KeyBudget) -> list[str]:
    """The budget as lines a person reads; a fact the source did not state is left out."""
    lines = [f"source: {found.source}"]
    for name in ("spend", "limit", "remaining"):
        value = getattr(found, name)
        if value is not None:
            lines.append(f"{name}: {_amount(value, found.currency)}")
    if found.limit is None:
        lines.append("limit: none set")
    if found.interval:
        lines.append(f"resets every: {found.interval}")
    if found.reset_at is not None:
        lines.append(f"resets at: {found.reset_at.isoformat()}")
    return lines


def budget(args: argparse.Namespace, client: Client) -> int:
    route = client.resolve(args.model)
    try:
        found = client.key_budget(route)
    except NoKeyBudgetError as exc:
        if args.json:
            json.dump({"model": route.name, "budget": None}, sys.stdout)
            sys.stdout.write("\n")
        print(f"modelplug: {exc}", file=sys.stderr)
        return NO_BUDGET
    if args.json:
        json.dump({"model": route.name, "budget": found.model_dump(mode="json")}, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(f"{route.name}")
        for line in describe(found):
            print(f"  {line}")
    return 0
