"""Which store the counters live in: ``[limits] store``.

- ``"auto"`` (the default): a stores plugin's (modelplug-redis, once ``[redis] url`` is
  set), else the SQLite file in the data directory, shared by this machine's processes.
- ``"sqlite"``: that file, even when Redis is set.
- ``"memory"``: this process's memory only (nothing outlives the process).
- ``"redis"``: a stores plugin's, and an error when none is configured.

Only the user's own file and explicit arguments choose (see :mod:`.options`).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, cast

from modelplug import ConfigError, find_policies

from .store import SHARED

if TYPE_CHECKING:
    from modelplug import CallContext
    from modelplug_kit import CounterStore

    from .sqlite_store import SqliteCounters

__all__ = [
    "STORES",
    "STORES_KIND",
    "choose_store",
    "close_sqlite_counters",
    "sqlite_counters",
    "store_for",
]

STORES = ("auto", "sqlite", "memory", "redis")
STORES_KIND = "stores"  # a plugin (modelplug-redis) that offers shared stores

_FILES: dict[Path, SqliteCounters] = {}
_FILES_LOCK = threading.Lock()


def store_for(client: CallContext) -> CounterStore | None:
    """The shared counter store a stores plugin offers for ``client`` (None: none is
    configured)."""
    for plugin in find_policies(client, STORES_KIND):
        make = getattr(plugin, "counter_store", None)
        store = make(client) if make is not None else None
        if store is not None:
            return cast("CounterStore", store)
    return None


def sqlite_counters(path: Path) -> SqliteCounters:
    """The process's one store for the file at ``path`` (one connection per file)."""
    from .sqlite_store import SqliteCounters

    with _FILES_LOCK:
        found = _FILES.get(path)
        if found is None:
            found = _FILES[path] = SqliteCounters(path)
        return found


def close_sqlite_counters(client: CallContext) -> None:
    """Close this process's connections to ``client``'s counters file (``choose_store``
    gives every client of one data directory the same store); whoever counts there next
    opens them again."""
    if not _FILES:
        return
    from .sqlite_store import FILE_NAME

    with _FILES_LOCK:
        found = _FILES.get(client.settings.data_dir() / FILE_NAME)
    if found is not None:
        found.close()


def choose_store(client: CallContext, choice: str) -> CounterStore:
    """The store ``[limits] store = choice`` names, for ``client``."""
    if choice == "memory":
        return SHARED
    if choice in ("auto", "redis"):
        offered = store_for(client)
        if offered is not None:
            return offered
        if choice == "redis":
            raise ConfigError(
                '[limits] store = "redis": no Redis is set. Set [redis] url in your own '
                "settings file (or MODELPLUG_REDIS_URL) with modelplug-redis installed, or "
                'choose store = "sqlite" (this machine) or "memory" (this process)'
            )
    from .sqlite_store import FILE_NAME

    return sqlite_counters(client.settings.data_dir() / FILE_NAME)
