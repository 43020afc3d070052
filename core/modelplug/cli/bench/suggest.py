"""``modelplug bench --suggest``: the four role names filled from the bench's results,
ranked as the routing bench ranks models: by cheapness, local models first, then by
list price weighted towards input (three input tokens to one output), an unpriced model
placed by a guess from its name (and said so). A tool-less model is never chosen for a
role that edits (``smart``, ``worker``), nor is a local model under 7B as ``worker``.

* ``smart``: the best pass rate (the cheaper on a tie);
* ``worker``: the cheapest whose pass rate is within 25 points of the best;
* ``cheap``: the cheapest that passed anything;
* ``fast``: the least wall time per run among those that passed anything.

``smart`` and ``worker`` are built-in roles (a role is looked up before an alias), so
they are written under ``[roles]``; ``fast`` and ``cheap`` under ``[aliases]``.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from modelplug.cli.bench.report import ModelResult
from modelplug.contract.settings import BUILTIN_ROLES
from modelplug.contract.types import Route, Usage

if TYPE_CHECKING:
    from modelplug.client.client import Client

__all__ = ["TOOL_ROLES", "Ranked", "apply_to_text", "guess_price", "rank", "suggest"]

TOOL_ROLES = ("smart", "worker")
#: What a million tokens cost, weighted to input: 3 input tokens to 1 output.
WEIGHTED_MILLION = Usage(input=750_000, output=250_000)
WORKER_MARGIN = 0.25
# Guessed USD per weighted million tokens by what a name says of a model's size.
_CHEAP_WORDS = re.compile(r"mini|nano|flash|haiku|lite|small|tiny|\b[0-9.]+[bm]\b|[-:][1-8]b")
_DEAR_WORDS = re.compile(r"opus|pro\b|large|ultra|sonnet|gpt-5|o3|70b|405b")
_SIZE = re.compile(r"(?<![0-9.])([0-9]+(?:\.[0-9]+)?)([bm])(?![a-z])")


@dataclass
class Ranked:
    """One model as ranked: its results, its weighted price and where that came from."""

    result: ModelResult
    price: Decimal
    price_said: str  # "local", "list price", or "guessed from its name"
    local: bool


def guess_price(model: str) -> Decimal:
    """A guessed USD per weighted million tokens, from the model's name alone."""
    name = model.lower()
    if _CHEAP_WORDS.search(name):
        return Decimal("0.3")
    if _DEAR_WORDS.search(name):
        return Decimal("6")
    return Decimal("1.5")


def billions(model: str) -> float | None:
    """The size a name states (``qwen3:8b`` 8, ``gemma-3-270m`` 0.27), or None."""
    found = _SIZE.findall(model.lower().replace("_", "-"))
    if not found:
        return None
    number, unit = found[-1]
    return float(number) / (1000 if unit == "m" else 1)


def rank(client: Client, results: list[ModelResult], routes: dict[str, Route]) -> list[Ranked]:
    """The models cheapest first: local, then by weighted price (guessed when unpriced)."""
    ranked = []
    for result in results:
        route = routes[result.model]
        if route.endpoint.local:
            ranked.append(Ranked(result, Decimal(0), "local", True))
            continue
        cost = client.price(route, WEIGHTED_MILLION)
        if cost is not None:
            ranked.append(Ranked(result, cost.amount, "list price", False))
        else:
            ranked.append(Ranked(result, guess_price(route.model), "guessed from its name", False))
    return sorted(ranked, key=lambda r: (not r.local, r.price))


def suggest(ranked: list[Ranked]) -> dict[str, Ranked]:
    """The model for each role name (a name none fits is left out)."""
    with_tools = [r for r in ranked if not r.result.tool_less]
    passing = [r for r in ranked if r.result.passed]
    chosen: dict[str, Ranked] = {}
    if with_tools:
        best = max(r.result.pass_rate for r in with_tools)
        chosen["smart"] = next(r for r in with_tools if r.result.pass_rate == best)
        workers = [
            r
            for r in with_tools
            if r.result.pass_rate >= best - WORKER_MARGIN
            and not (r.local and (billions(r.result.model) or 7) < 7)
        ]
        if workers:
            chosen["worker"] = workers[0]
    if passing:
        chosen["cheap"] = passing[0]
        chosen["fast"] = min(passing, key=lambda r: r.result.seconds / len(r.result.runs))
    return chosen


def table_for(name: str) -> str:
    return "roles" if name in BUILTIN_ROLES else "aliases"


def apply_to_text(text: str, names: dict[str, str]) -> str:
    """``text`` (a settings file) with each name set to its model under ``[roles]`` or
    ``[aliases]`` (see the module), the rest of the file kept as it was."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    for table in ("aliases", "roles"):
        wanted = {n: m for n, m in names.items() if table_for(n) == table}
        if wanted:
            lines = _set_in_table(lines, table, wanted)
    new_text = "".join(lines)
    tomllib.loads(new_text)  # never write a file that would not read back
    return new_text


def _set_in_table(lines: list[str], table: str, wanted: dict[str, str]) -> list[str]:
    header = next((i for i, line in enumerate(lines) if line.strip() == f"[{table}]"), None)
    entries = [f'{name} = "{model}"\n' for name, model in wanted.items()]
    if header is None:
        return [*lines, *(["\n"] if lines else []), f"[{table}]\n", *entries]
    end = next(
        (i for i in range(header + 1, len(lines)) if lines[i].lstrip().startswith("[")),
        len(lines),
    )
    key = re.compile(r"^\s*(" + "|".join(map(re.escape, wanted)) + r")\s*=")
    body = [line for line in lines[header + 1 : end] if not key.match(line)]
    return [*lines[: header + 1], *entries, *body, *lines[end:]]


def current_names(path: Path, names: list[str]) -> dict[str, str | None]:
    """What each name is set to in the file now (None: not set)."""
    data = tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    return {n: data.get(table_for(n), {}).get(n) for n in names}
