"""What another plugin counts with the limits' own pieces: the counter store ``[limits]
store`` names, and the output a reservation assumes for a request that sets no cap.

modelplug-gateway's per-key budgets count in the same store as the limits' budgets (a
key's spend is shared by every replica the way a daily budget is) and reserve a call's
most cost as the limits do; it reaches these through the package's top-level names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .options import load_options
from .stores import choose_store

if TYPE_CHECKING:
    from modelplug import CallContext
    from modelplug_kit import CounterStore

__all__ = ["counter_store_for", "default_max_tokens"]


def counter_store_for(client: CallContext) -> CounterStore:
    """The counter store ``[limits] store`` names for ``client`` (Redis when a stores
    plugin offers it, this machine's SQLite file, or this process's memory).

    :raises modelplug.ConfigError: ``store = "redis"`` and no Redis is set.
    """
    return choose_store(client, load_options(client.settings).store)


def default_max_tokens(client: CallContext) -> int:
    """``[limits] default_max_tokens``: the output tokens a reservation assumes for a
    request that sets no ``max_tokens`` and whose model states no output limit."""
    return load_options(client.settings).default_max_tokens
