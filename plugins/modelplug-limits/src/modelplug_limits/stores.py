"""Which store the counters live in: ``[limits] store``.

- ``"auto"`` (the default): a stores plugin's (modelplug-redis, once ``[redis] url`` is
  set), else the SQLite file in the data directory, shared by this machine's processes.
- ``"sqlite"``: that file, even when Redis is set.
- ``"memory"``: this process's memory only (nothing outlives the process).
- ``"redis"``: a stores plugin's, and an error when none is configured.

Only the user's own file and explicit arguments choose (see :mod:`.options`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug_kit import STORE_CHOICES, choose_counter_store, close_counter_file, offered_store

from .store import SHARED

if TYPE_CHECKING:
    from modelplug import CallContext
    from modelplug_kit import CounterStore

__all__ = ["FILE_NAME", "STORES", "choose_store", "close_sqlite_counters", "store_for"]

STORES = STORE_CHOICES
FILE_NAME = "limits.sqlite3"


def store_for(client: CallContext) -> CounterStore | None:
    """The shared counter store a stores plugin offers for ``client`` (None: none is
    configured)."""
    return offered_store(client)


def close_sqlite_counters(client: CallContext) -> None:
    """Close this process's connections to ``client``'s counters file (``choose_store``
    gives every client of one data directory the same store); whoever counts there next
    opens them again."""
    close_counter_file(client, FILE_NAME)


def choose_store(client: CallContext, choice: str) -> CounterStore:
    """The store ``[limits] store = choice`` names, for ``client``."""
    return choose_counter_store(
        client, choice, file_name=FILE_NAME, setting="[limits] store", memory=SHARED
    )
