"""The ``[limits]`` settings: pacing per model, provider or key, and budgets.

```toml
[limits]
max_wait = 30              # seconds a call may wait for room before it fails over
unknown_price = "refuse"   # or "tokens": count only token budgets for such a model
default_max_tokens = 4096  # the output a reservation assumes when a request sets none
store = "auto"             # Redis when [redis] url is set, else this machine's SQLite
                           # file; or "sqlite", "memory" (this process), "redis"

[limits."openai/gpt-4.1"]  # a model; "openai" is every model of the provider, and
rpm = 500                  # "key:OPENAI_API_KEY" every call made with that key
tpm = 30000
window = 60                # seconds (rpm and tpm count per window)

[limits.budgets.daily]
spend = "5.00"             # a Decimal in the price's currency
currency = "USD"
tokens = 2000000
period = "day"             # call, hour, day, week, month, total (UTC calendar periods)
scope = "all"              # all, "role:NAME", "model:provider/model", project
```

Only the user's own file (or explicit arguments) can raise a limit: what a project file
says is taken only where it is stricter (a lower number, a new limit, "refuse"). Nor can
a project file choose the store: one that counted in memory would make a daily budget
count per process again.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from modelplug import ConfigError, Settings, warn

from .stores import STORES

__all__ = ["PERIODS", "Budget", "LimitsOptions", "RateLimit", "load_options"]

PERIODS = ("call", "hour", "day", "week", "month", "total")
GENERAL = ("max_wait", "unknown_price", "default_max_tokens", "store", "budgets")


@dataclass(frozen=True)
class RateLimit:
    """Requests and tokens per window for one model, provider or key (``name``)."""

    name: str
    rpm: int | None = None
    tpm: int | None = None
    window: float = 60.0


@dataclass(frozen=True)
class Budget:
    """A spend and/or token budget over a period, for a scope of calls."""

    name: str
    period: str = "day"
    scope: str = "all"
    spend: Decimal | None = None
    tokens: int | None = None
    currency: str = "USD"

    def applies_to(self, route_name: str, role: str | None) -> bool:
        kind, _, value = self.scope.partition(":")
        if kind == "model":
            return route_name == value
        if kind == "role":
            return role == value
        return True  # all, project (counted per project)


@dataclass(frozen=True)
class LimitsOptions:
    max_wait: float = 30.0
    unknown_price: str = "refuse"
    default_max_tokens: int = 4096
    store: str = "auto"
    rates: tuple[RateLimit, ...] = ()
    budgets: tuple[Budget, ...] = ()

    def rates_for(self, names: tuple[str, ...]) -> list[RateLimit]:
        return [r for r in self.rates if r.name in names]


def load_options(settings: Settings, explicit: Mapping[str, Any] | None = None) -> LimitsOptions:
    """``[limits]`` as the user's file, the environment and ``explicit`` (a policy's own
    options) say, with the project file's word taken only where it is stricter."""
    trusted = {**settings.plugin_options("limits", project=False), **(explicit or {})}
    merged = {**settings.plugin_options("limits"), **(explicit or {})}
    return _stricter(_parse(trusted), _parse(merged))


def _parse(table: Mapping[str, Any]) -> LimitsOptions:
    rates = tuple(
        _rate(name, value)
        for name, value in table.items()
        if name not in GENERAL and isinstance(value, dict)
    )
    for name, value in table.items():
        if name not in GENERAL and not isinstance(value, dict):
            warn(f"[limits] has unknown option {name}; known: {', '.join(GENERAL[:4])}")
    budgets_table = table.get("budgets", {})
    if not isinstance(budgets_table, dict):
        raise ConfigError("[limits] budgets: expected a table of named budgets")
    budgets = tuple(_budget(name, value) for name, value in budgets_table.items())
    unknown_price = table.get("unknown_price", "refuse")
    if unknown_price not in ("refuse", "tokens"):
        raise ConfigError("[limits] unknown_price: expected 'refuse' or 'tokens'")
    store = table.get("store", "auto")
    if store not in STORES:
        raise ConfigError(f"[limits] store: expected one of {', '.join(STORES)}")
    return LimitsOptions(
        max_wait=_number(table, "max_wait", 30.0, "limits"),
        unknown_price=unknown_price,
        default_max_tokens=int(_number(table, "default_max_tokens", 4096, "limits", whole=True)),
        store=store,
        rates=rates,
        budgets=budgets,
    )


def _rate(name: str, table: Mapping[str, Any]) -> RateLimit:
    where = f'limits."{name}"'
    _only(table, ("rpm", "tpm", "window"), where)
    rpm, tpm = table.get("rpm"), table.get("tpm")
    return RateLimit(
        name=name,
        rpm=None if rpm is None else int(_number(table, "rpm", 0, where, whole=True)),
        tpm=None if tpm is None else int(_number(table, "tpm", 0, where, whole=True)),
        window=_number(table, "window", 60.0, where, positive=True),
    )


def _budget(name: str, table: Any) -> Budget:
    where = f"limits.budgets.{name}"
    if not isinstance(table, dict):
        raise ConfigError(f"[{where}]: expected a table")
    _only(table, ("spend", "tokens", "period", "scope", "currency"), where)
    period = table.get("period", "day")
    if period not in PERIODS:
        raise ConfigError(f"[{where}] period: expected one of {', '.join(PERIODS)}")
    scope = table.get("scope", "all")
    kind = scope.partition(":")[0] if isinstance(scope, str) else None
    if kind not in ("all", "project", "role", "model") or (
        kind in ("role", "model") and not scope.partition(":")[2]
    ):
        raise ConfigError(
            f"[{where}] scope: expected all, project, 'role:NAME' or 'model:provider/model'"
        )
    spend = table.get("spend")
    tokens = table.get("tokens")
    if spend is None and tokens is None:
        raise ConfigError(f"[{where}]: set spend, tokens or both")
    currency = table.get("currency", "USD")
    if not isinstance(currency, str) or not currency:
        raise ConfigError(f"[{where}] currency: expected a currency code such as USD")
    return Budget(
        name=name,
        period=period,
        scope=scope,
        spend=None if spend is None else _decimal(spend, f"[{where}] spend"),
        tokens=None if tokens is None else int(_number(table, "tokens", 0, where, whole=True)),
        currency=currency,
    )


def _only(table: Mapping[str, Any], known: tuple[str, ...], where: str) -> None:
    for key in table:
        if key not in known:
            raise ConfigError(f"[{where}] {key}: unknown key (known: {', '.join(known)})")


def _number(
    table: Mapping[str, Any],
    key: str,
    default: float,
    where: str,
    *,
    whole: bool = False,
    positive: bool = False,
) -> float:
    value = table.get(key, default)
    wrong_kind = whole and not isinstance(value, int)
    if isinstance(value, bool) or not isinstance(value, int | float) or wrong_kind:
        what = "a whole number" if whole else "a number"
        raise ConfigError(f"[{where}] {key}: expected {what}, got {type(value).__name__}")
    if math.isnan(value):
        raise ConfigError(f"[{where}] {key}: expected a number, got NaN")
    if value < 0 or (positive and value == 0):
        raise ConfigError(f"[{where}] {key}: must be {'above' if positive else 'at least'} 0")
    return float(value)


def _decimal(value: Any, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise ConfigError(f'{where}: expected an amount such as "5.00"')
    try:
        amount = Decimal(str(value).strip())
    except InvalidOperation:
        raise ConfigError(f'{where}: expected an amount such as "5.00"') from None
    if not amount.is_finite() or amount < 0:
        raise ConfigError(f"{where}: expected a finite amount of at least 0")
    return amount


# -- the project file may only lower ---------------------------------------------------


def _low(a: Any, b: Any) -> Any:
    """The stricter of two limits, where None is no limit."""
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def _stricter(trusted: LimitsOptions, merged: LimitsOptions) -> LimitsOptions:
    """``trusted`` (user, environment, explicit) with what ``merged`` (the project file
    included) adds where that is stricter."""
    rates = {r.name: r for r in trusted.rates}
    for rate in merged.rates:
        mine = rates.get(rate.name)
        if mine is None:
            rates[rate.name] = rate  # a new limit only lowers
        else:
            rates[rate.name] = RateLimit(
                rate.name, _low(mine.rpm, rate.rpm), _low(mine.tpm, rate.tpm), mine.window
            )
    budgets = {b.name: b for b in trusted.budgets}
    for budget in merged.budgets:
        own = budgets.get(budget.name)
        if own is None:
            budgets[budget.name] = budget
        else:
            budgets[budget.name] = Budget(
                own.name,
                own.period,
                own.scope,
                _low(own.spend, budget.spend),
                _low(own.tokens, budget.tokens),
                own.currency,
            )
    if merged.store != trusted.store:
        warn(
            "[limits] store: a project file cannot choose where your budgets count; "
            f"ignored (the store stays {trusted.store!r}; set it in your own settings file)"
        )
    return LimitsOptions(
        max_wait=min(trusted.max_wait, merged.max_wait),
        unknown_price="refuse"
        if "refuse" in (trusted.unknown_price, merged.unknown_price)
        else "tokens",
        default_max_tokens=max(trusted.default_max_tokens, merged.default_max_tokens),
        store=trusted.store,
        rates=tuple(rates.values()),
        budgets=tuple(budgets.values()),
    )
