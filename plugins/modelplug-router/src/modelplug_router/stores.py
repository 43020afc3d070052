"""Which counter store the router's state lives in: ``[router] store``.

The same choice as the limits': ``"auto"`` (the default) is a stores plugin's
(modelplug-redis once ``[redis] url`` is set), else the kit's SQLite file
``router.sqlite3`` in the data directory, shared by this machine's processes;
``"sqlite"`` that file; ``"memory"`` this process only; ``"redis"`` a stores plugin's or
an error. Only the user's own file chooses (a project file's ``store`` is ignored).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, cast

from modelplug import ConfigError, find_policies, warn
from modelplug_kit import MemoryCounters

if TYPE_CHECKING:
    from modelplug import CallContext
    from modelplug_kit import CounterStore, SqliteCounters

__all__ = ["FILE_NAME", "SHARED", "STORES", "choose_store", "close_sqlite_state", "store_choice"]

FILE_NAME = "router.sqlite3"
STORES = ("auto", "sqlite", "memory", "redis")
STORES_KIND = "stores"  # a plugin (modelplug-redis) that offers shared stores
SHARED = MemoryCounters()
"""The state every client of this process shares with ``store = "memory"``."""

_FILES: dict[Path, SqliteCounters] = {}
_FILES_LOCK = threading.Lock()


def store_choice(client: CallContext) -> str:
    """``[router] store`` from the user's own settings (never a project file's)."""
    trusted = client.settings.plugin_options("router", project=False)
    choice = trusted.get("store", "auto")
    if choice not in STORES:
        raise ConfigError(f"[router] store must be one of {', '.join(STORES)}, not {choice!r}")
    said = client.settings.plugin_options("router").get("store", choice)
    if said != choice:
        warn(
            "[router] store: a project file cannot choose where the router's state lives; "
            f"ignored (the store stays {choice!r}; set it in your own settings file)"
        )
    return str(choice)


def choose_store(client: CallContext, choice: str) -> CounterStore:
    """The store ``[router] store = choice`` names, for ``client``."""
    if choice == "memory":
        return SHARED
    if choice in ("auto", "redis"):
        for plugin in find_policies(client, STORES_KIND):
            make = getattr(plugin, "counter_store", None)
            offered = make(client) if make is not None else None
            if offered is not None:
                return cast("CounterStore", offered)
        if choice == "redis":
            raise ConfigError(
                '[router] store = "redis": no Redis is set. Set [redis] url in your own '
                "settings file (or MODELPLUG_REDIS_URL) with modelplug-redis installed, or "
                'choose store = "sqlite" (this machine) or "memory" (this process)'
            )
    return sqlite_state(client.settings.data_dir() / FILE_NAME)


def sqlite_state(path: Path) -> SqliteCounters:
    """The process's one store for the file at ``path``."""
    from modelplug_kit import SqliteCounters

    with _FILES_LOCK:
        found = _FILES.get(path)
        if found is None:
            found = _FILES[path] = SqliteCounters(path)
        return found


def close_sqlite_state(client: CallContext) -> None:
    """Close this process's connections to ``client``'s state file (opened again by the
    next call that picks a deployment)."""
    if not _FILES:
        return
    with _FILES_LOCK:
        found = _FILES.get(client.settings.data_dir() / FILE_NAME)
    if found is not None:
        found.close()
