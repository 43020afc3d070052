"""``modelplug limits``: what each budget has spent and has left, and the rate windows
now, as the store shared by the workers sees them."""

from __future__ import annotations

import asyncio
import json
import time
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from .money import from_nano, to_nano
from .plan import period_window, scope_key
from .policy import default_policy

if TYPE_CHECKING:
    from modelplug.plugin import Client

__all__ = ["show_limits", "snapshot"]


async def snapshot(client: Client, now: float | None = None) -> dict[str, Any]:
    """Every budget's counters for the current period and every rate window's."""
    policy = default_policy()
    options, store = policy.setup(client)
    now = time.time() if now is None else now
    rows: list[tuple[str, dict[str, Any]]] = []
    shown: dict[str, Any]
    for budget in options.budgets:
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
    for rate in options.rates:
        window = int(now // rate.window)
        for measure, limit in (("requests", rate.rpm), ("tokens", rate.tpm)):
            if limit is not None:
                shown = {"kind": "rate", "name": rate.name, "measure": measure}
                shown["limit"] = f"{limit} per {rate.window:g} s"
                rows.append((f"rate:{rate.name}:{measure}:{window}", shown))
    values = await store.read([key for key, _ in rows]) if rows else []
    out = []
    for (_key, shown), found in zip(rows, values, strict=True):
        used = found[0] if found else 0
        if shown["kind"] == "budget" and shown["measure"] == "spend":
            limit_text, currency = shown["limit"].split()
            limit_nano = to_nano(Decimal(limit_text))
            shown["spent"] = f"{from_nano(used):f} {currency}"
            shown["remaining"] = f"{from_nano(max(0, limit_nano - used)):f} {currency}"
        elif shown["kind"] == "budget":
            shown["spent"] = str(used)
            shown["remaining"] = str(max(0, int(shown["limit"]) - used))
        else:
            shown["used"] = used
            shown["resets_in"] = round(found[1], 1) if found else None
        if shown["kind"] == "budget" and shown["period"] == "call":
            shown["spent"] = shown["remaining"] = "per call"
        out.append(shown)
    return {"store": type(store).__name__, "limits": out}


def show_limits(client: Client, *, as_json: bool = False) -> int:
    data = asyncio.run(snapshot(client))
    if as_json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"store: {data['store']}")
    if data["store"] == "MemoryCounters":
        print("  (this process's memory: it shows nothing that other processes counted)")
    if not data["limits"]:
        print("no budgets or rate limits are set ([limits] in your settings)")
    for row in data["limits"]:
        if row["kind"] == "budget":
            print(
                f"budget {row['name']} ({row['measure']}, per {row['period']}, {row['scope']}): "
                f"spent {row['spent']} of {row['limit']}, remaining {row['remaining']}"
                + (f", resets {row['resets']}" if row["resets"] else "")
            )
        else:
            resets = f", resets in {row['resets_in']} s" if row["resets_in"] else ""
            print(f"rate {row['name']} ({row['measure']}): {row['used']} of {row['limit']}{resets}")
    return 0
