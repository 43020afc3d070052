"""Which counter store the router's state lives in: ``[router] store``.

The same choice as the limits': ``"auto"`` (the default) is a stores plugin's
(modelplug-redis once ``[redis] url`` is set), else the kit's SQLite file
``router.sqlite3`` in the data directory, shared by this machine's processes;
``"sqlite"`` that file; ``"memory"`` this process only; ``"redis"`` a stores plugin's or
an error. Only the user's own file chooses (a project file's ``store`` is ignored).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug import ConfigError, warn
from modelplug_kit import STORE_CHOICES, choose_counter_store, close_counter_file

if TYPE_CHECKING:
    from modelplug import CallContext
    from modelplug_kit import CounterStore

__all__ = ["FILE_NAME", "choose_store", "close_sqlite_state", "store_choice"]

FILE_NAME = "router.sqlite3"


def store_choice(client: CallContext) -> str:
    """``[router] store`` from the user's own settings (never a project file's)."""
    trusted = client.settings.plugin_options("router", project=False)
    choice = trusted.get("store", "auto")
    if choice not in STORE_CHOICES:
        raise ConfigError(
            f"[router] store must be one of {', '.join(STORE_CHOICES)}, not {choice!r}"
        )
    said = client.settings.plugin_options("router").get("store", choice)
    if said != choice:
        warn(
            "[router] store: a project file cannot choose where the router's state lives; "
            f"ignored (the store stays {choice!r}; set it in your own settings file)"
        )
    return str(choice)


def choose_store(client: CallContext, choice: str) -> CounterStore:
    """The store ``[router] store = choice`` names, for ``client``."""
    return choose_counter_store(client, choice, file_name=FILE_NAME, setting="[router] store")


def close_sqlite_state(client: CallContext) -> None:
    """Close this process's connections to ``client``'s state file (opened again by the
    next call that picks a deployment)."""
    close_counter_file(client, FILE_NAME)
