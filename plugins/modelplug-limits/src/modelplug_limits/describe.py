"""What the counters say now, for people: every budget's spend and room and every rate
window, as the store the processes share sees them (``modelplug limits``), and the same
for one route (``modelplug resolve``'s limits section).

It takes its policy as :class:`CountingPolicy` and sits below :mod:`.policy` (which
imports it for ``modelplug resolve``) and :mod:`.cli` (which passes the default policy),
so the imports run one way.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

from modelplug import Usage
from modelplug_kit import PERIOD_WORDS, MemoryCounters, from_nano, period_window, to_nano

from .plan import WINDOW_GRACE, key_name, scope_key

if TYPE_CHECKING:
    from modelplug import CallContext, Route
    from modelplug_kit import CounterStore

    from .options import LimitsOptions

__all__ = ["CountingPolicy", "describe_route", "row_text", "snapshot", "store_text"]


class CountingPolicy(Protocol):
    """The policy as this module reads it (a LimitsPolicy is one): its options and
    store on a client, and its clock."""

    clock: Callable[[], float]

    def setup(self, client: CallContext) -> tuple[LimitsOptions, CounterStore]:
        """This policy's options and store on ``client``."""
        ...


def store_text(store: CounterStore) -> str:
    """Where the counters live and who shares them, for people."""
    if isinstance(store, MemoryCounters):
        return (
            "this process's memory: it shows nothing that other processes counted "
            '([limits] store = "sqlite" shares them on this machine)'
        )
    path = getattr(store, "path", None)
    if path is not None:
        return f"{path}, shared by this machine's processes"
    return f"{store!r}, shared by every process that uses it"


async def snapshot(
    client: CallContext,
    policy: CountingPolicy,
    now: float | None = None,
    route: Route | None = None,
) -> dict[str, Any]:
    """Every budget's counters for the current period and every rate window's; with
    ``route``, only those that count a call on it, the room its server reported last,
    and whether its price is known when a spend budget needs it. ``policy``: whose
    options and store."""
    options, store = policy.setup(client)
    now = policy.clock() if now is None else now
    budgets = options.budgets
    rates = options.rates
    if route is not None:
        budgets = tuple(b for b in budgets if b.applies_to(route.name, route.role))
        rates = tuple(options.rates_for((route.name, route.provider, f"key:{key_name(route)}")))
    rows: list[tuple[str, dict[str, Any]]] = []
    shown: dict[str, Any]
    for budget in budgets:
        period, _, resets = period_window(budget.period, now)
        base = f"budget:{budget.name}:{scope_key(budget, client)}"
        for measure, limit in (("spend", budget.spend), ("tokens", budget.tokens)):
            if limit is None:
                continue
            shown = {
                "kind": "budget",
                "name": budget.name,
                "measure": measure,
                "period": budget.period,
                "scope": budget.scope,
                "resets": resets,
            }
            if measure == "spend":
                shown["limit"] = f"{limit} {budget.currency}"
            else:
                shown["limit"] = str(limit)
            rows.append((f"{base}:{measure}:{period}", shown))
    for rate in rates:
        window = int(now // rate.window)
        for measure, limit in (("requests", rate.rpm), ("tokens", rate.tpm)):
            if limit is not None:
                shown = {"kind": "rate", "name": rate.name, "measure": measure}
                shown["limit"] = f"{limit} per {rate.window:g} s"
                rows.append((f"rate:{rate.name}:{measure}:{window}", shown))
    if route is not None:
        for measure in ("requests", "tokens"):
            shown = {"kind": "learned", "name": route.name, "measure": measure}
            rows.append((f"learned:{route.name}@{key_name(route)}:{measure}", shown))
    values = await store.read([key for key, _ in rows]) if rows else []
    out = []
    for (_key, shown), found in zip(rows, values, strict=True):
        used = found[0] if found else 0
        if shown["kind"] == "learned":
            if found is None:
                continue  # the server said nothing lately
            shown["remaining"] = used
            shown["resets_in"] = round(found[1], 1)
        elif shown["kind"] == "budget" and shown["measure"] == "spend":
            limit_text, currency = shown["limit"].split()
            limit_nano = to_nano(Decimal(limit_text))
            shown["spent"] = f"{from_nano(used):f} {currency}"
            shown["remaining"] = f"{from_nano(max(0, limit_nano - used)):f} {currency}"
        elif shown["kind"] == "budget":
            shown["spent"] = str(used)
            shown["remaining"] = str(max(0, int(shown["limit"]) - used))
        else:
            shown["used"] = used
            # The counter outlives its window by a grace; the window is what resets.
            shown["resets_in"] = round(max(0.0, found[1] - WINDOW_GRACE), 1) if found else None
        if shown["kind"] == "budget" and shown["period"] == "call":
            shown["spent"] = shown["remaining"] = "per call"
        out.append(shown)
    if route is not None:
        spend = [b for b in budgets if b.spend is not None]
        if spend and client.price(route, Usage(input=1, output=1)) is None:
            out.append(
                {
                    "kind": "price",
                    "name": route.name,
                    "known": False,
                    "unknown_price": options.unknown_price,
                    "budgets": [b.name for b in spend],
                }
            )
    return {"store": type(store).__name__, "where": store_text(store), "limits": out}


def row_text(row: dict[str, Any]) -> str:
    """One row of :func:`snapshot` as ``modelplug limits`` prints it."""
    if row["kind"] == "budget":
        period = PERIOD_WORDS[row["period"]]
        return (
            f"budget {row['name']} ({row['measure']}, {period}, {row['scope']}): "
            f"spent {row['spent']} of {row['limit']}, remaining {row['remaining']}"
            + (f", resets {row['resets']}" if row["resets"] else "")
        )
    if row["kind"] == "learned":
        return (
            f"server's room for {row['name']} ({row['measure']}): {row['remaining']} left, "
            f"for {row['resets_in']} s"
        )
    if row["kind"] == "price":
        budgets = ", ".join(repr(name) for name in row["budgets"])
        if row["unknown_price"] == "tokens":
            what = 'counted by its tokens only ([limits] unknown_price = "tokens")'
        else:
            what = (
                f"refused by the spend budget {budgets} ([limits] unknown_price = "
                f'"refuse"; give {row["name"]} a price, or set unknown_price = "tokens")'
            )
        return f"price of {row['name']}: unknown, so a call is {what}"
    resets = f", resets in {row['resets_in']} s" if row["resets_in"] else ""
    return f"rate {row['name']} ({row['measure']}): {row['used']} of {row['limit']}{resets}"


async def describe_route(
    policy: CountingPolicy, route: Route, client: CallContext
) -> dict[str, Any]:
    """``modelplug resolve``'s limits section: what counts a call on ``route`` now."""
    data = await snapshot(client, policy, route=route)
    lines = [row_text(row) for row in data["limits"]]
    if not lines:
        lines = ["no budget or rate limit counts calls on this route ([limits] in your settings)"]
    lines.append(f"store: {data['store']} ({data['where']})")
    return {"section": "limits", "lines": lines, **data}
