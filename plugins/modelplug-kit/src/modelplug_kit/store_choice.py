"""Where a policy's counters live, as a settings table's ``store`` names it.

The policies that keep state between calls (modelplug-limits' budgets and rate windows,
modelplug-router's deployments, modelplug-deadline's first calls) offer one choice:

- ``"auto"``: a stores plugin's (modelplug-redis once ``[redis] url`` is set), else
  this machine's SQLite file;
- ``"sqlite"``: the SQLite file in the data directory, shared by this machine's
  processes, even when Redis is set;
- ``"memory"``: this process's memory only (nothing outlives the process);
- ``"redis"``: a stores plugin's, and an error naming the fix when none is set.

Each policy names its own file (``router.sqlite3``...), so their counters never mix; a
process opens each file once, however many clients use it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, cast

from modelplug import ConfigError, find_policies

if TYPE_CHECKING:
    from pathlib import Path

    from modelplug import CallContext

    from modelplug_kit.memory_stores import MemoryCounters
    from modelplug_kit.sqlite_counters import SqliteCounters
    from modelplug_kit.stores import CounterStore

__all__ = ["STORE_CHOICES", "choose_counter_store", "close_counter_file", "offered_store"]

STORE_CHOICES = ("auto", "sqlite", "memory", "redis")
"""What a settings table's ``store`` may say."""

# The kind a stores plugin (modelplug-redis) declares: it offers ``counter_store(client)``.
STORES_KIND = "stores"

_FILES: dict[Path, SqliteCounters] = {}
_MEMORY: dict[str, MemoryCounters] = {}
_LOCK = threading.Lock()


def offered_store(client: CallContext) -> CounterStore | None:
    """The shared store a stores plugin offers for ``client``; None when none is set."""
    for plugin in find_policies(client, STORES_KIND):
        make = getattr(plugin, "counter_store", None)
        store = make(client) if make is not None else None
        if store is not None:
            return cast("CounterStore", store)
    return None


def choose_counter_store(
    client: CallContext,
    choice: str,
    *,
    file_name: str,
    setting: str,
    memory: CounterStore | None = None,
) -> CounterStore:
    """The store ``choice`` names for ``client``: see the module's list.

    :param file_name: the policy's SQLite file in the data directory, and the name its
        process-wide memory store is kept under.
    :param setting: the setting that chose, as the user wrote it (``[router] store``),
        for the error messages.
    :param memory: the process-wide store ``"memory"`` means, when the policy keeps its
        own (else one per ``file_name``).
    :raises ConfigError: an unknown choice, or ``"redis"`` with no Redis set.
    """
    if choice not in STORE_CHOICES:
        raise ConfigError(f"{setting} must be one of {', '.join(STORE_CHOICES)}, not {choice!r}")
    if choice == "memory":
        return memory if memory is not None else _memory(file_name)
    if choice in ("auto", "redis"):
        offered = offered_store(client)
        if offered is not None:
            return offered
        if choice == "redis":
            raise ConfigError(
                f'{setting} = "redis": no Redis is set. Set [redis] url in your own settings '
                "file (or MODELPLUG_REDIS_URL) with modelplug-redis installed, or choose "
                '"sqlite" (this machine) or "memory" (this process)'
            )
    return _file(client.settings.data_dir() / file_name)


def close_counter_file(client: CallContext, file_name: str) -> None:
    """Close this process's connection to ``client``'s counters file ``file_name``, if
    open; whoever counts there next opens it again."""
    if not _FILES:
        return  # no file was opened in this process: nothing to look up
    with _LOCK:
        found = _FILES.get(client.settings.data_dir() / file_name)
    if found is not None:
        found.close()


def _memory(name: str) -> MemoryCounters:
    from modelplug_kit.memory_stores import MemoryCounters

    with _LOCK:
        found = _MEMORY.get(name)
        if found is None:
            found = _MEMORY[name] = MemoryCounters()
        return found


def _file(path: Path) -> SqliteCounters:
    from modelplug_kit.sqlite_counters import SqliteCounters

    with _LOCK:
        found = _FILES.get(path)
        if found is None:
            found = _FILES[path] = SqliteCounters(path)
        return found
