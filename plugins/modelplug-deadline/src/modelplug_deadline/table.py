"""The ``[deadlines.NAME]`` tables: each names a deadline route usable as a model spec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from modelplug import ConfigError

from .durations import parse_duration, parse_instant

if TYPE_CHECKING:
    from modelplug import Settings

__all__ = ["KEYS", "SECTION", "STORES", "Deadline", "deadline_named", "deadline_names"]

SECTION = "deadlines"
KEYS = ("slow", "fast", "switch_after", "switch_at", "step_limit", "store")
STORES = ("client", "auto", "sqlite", "memory", "redis")
"""Where ``switch_after``'s first call is recorded: ``client`` (each Client its own),
else a counter store as the kit's ``choose_counter_store`` names it."""


@dataclass(frozen=True)
class Deadline:
    """One deadline route. Times are seconds (``switch_at``: Unix time).

    - ``slow``: the cheap route every request goes to until the switch.
    - ``fast``: where a request goes after the switch, or once it waited ``step_limit``.
    - ``switch_after``: from the first call through this route to the switch.
    - ``switch_at``: the switch as an instant (at most one of the two).
    - ``step_limit``: the longest one request waits on ``slow``.
    - ``store``: where the first call is recorded (:data:`STORES`): ``client``, each
      Client's own; ``sqlite``, this machine's processes; ``redis``, every machine on
      one Redis; ``auto``, Redis when set, else this machine; ``memory``, this process.
    """

    name: str
    slow: str
    fast: str
    switch_after: float | None = None
    switch_at: float | None = None
    step_limit: float | None = None
    store: str = "client"


def deadline_names(settings: Settings) -> list[str]:
    """The names of the ``[deadlines.NAME]`` tables in ``settings``."""
    tables = settings.plugin_options(SECTION)
    return sorted(name for name, table in tables.items() if isinstance(table, dict))


def deadline_named(settings: Settings, name: str) -> Deadline | None:
    """The deadline route ``name`` (None: no such table).

    :raises ConfigError: the table is wrong; the message names the key and the fix.
    """
    table = settings.plugin_options(SECTION).get(name)
    if not isinstance(table, dict):
        return None
    where = f"[{SECTION}.{name}]"
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(KEYS)}")
    try:
        return _deadline(name, table, where)
    except ValueError as exc:
        raise ConfigError(f"{where} {exc}") from None


def _deadline(name: str, table: dict[str, Any], where: str) -> Deadline:
    slow, fast = table.get("slow"), table.get("fast")
    for key, spec in (("slow", slow), ("fast", fast)):
        if not isinstance(spec, str) or not spec.strip():
            raise ValueError(f"{key} must be a model spec, e.g. anthropic/claude-sonnet-4-6")
    if "switch_after" in table and "switch_at" in table:
        raise ValueError("switch_after and switch_at: set one of them, not both")
    if name in (slow, fast):
        raise ValueError(f"slow and fast must be other routes than {name!r} itself")
    return Deadline(
        name=name,
        slow=str(slow).strip(),
        fast=str(fast).strip(),
        switch_after=_optional(table, "switch_after", parse_duration),
        switch_at=_optional(table, "switch_at", parse_instant),
        step_limit=_optional(table, "step_limit", parse_duration),
        store=_store(table),
    )


def _store(table: dict[str, Any]) -> str:
    store = table.get("store", "client")
    if store not in STORES:
        raise ValueError(f"store must be one of {', '.join(STORES)}, not {store!r}")
    return str(store)


def _optional(table: dict[str, Any], key: str, parse: Any) -> float | None:
    if key not in table:
        return None
    value: float = parse(table[key], key)
    return value
