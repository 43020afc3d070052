"""Live price updates: genai-prices' background updater, only when the user asks.

``[prices] live_updates = true`` starts it (once per process) the first time a model is
resolved or priced with those settings; it then fetches new prices every ``update_interval``
seconds (default 3600) in a daemon thread. Never at import, and off unless set.

Only the user's own settings (user file, environment, settings given in code) can turn
it on: a project file cannot make modelplug fetch from the network, in the same spirit
as core refusing a project's base URLs.
"""

from __future__ import annotations

from typing import Any

from modelplug import ConfigError, Settings

__all__ = ["live_options", "start_if_wanted", "start_updater"]

SECTION = "prices"
_updater: Any = None


def live_options(settings: Settings) -> float | None:
    """The update interval in seconds when live updates are on, else None."""
    options = settings.plugin_options(SECTION, project=False)
    on = options.get("live_updates", False)
    if not isinstance(on, bool):
        raise ConfigError(f"[{SECTION}] live_updates must be true or false, not {on!r}")
    if not on:
        return None
    interval = options.get("update_interval", 3600)
    if isinstance(interval, bool) or not isinstance(interval, int | float) or interval < 60:
        raise ConfigError(
            f"[{SECTION}] update_interval must be a number of seconds, at least 60 "
            f"(got {interval!r})"
        )
    return float(interval)


def start_updater(interval: float) -> Any:
    """Start genai-prices' shared updater (a daemon thread fetching the price data)."""
    from .table import genai

    updater = genai().UpdatePrices(update_interval=interval)
    updater.start()
    return updater


def start_if_wanted(settings: Settings) -> bool:
    """Start live updates if the settings turn them on and they are not running yet.
    Returns True when this call started them."""
    global _updater
    if _updater is not None:
        return False
    interval = live_options(settings)
    if interval is None:
        return False
    _updater = start_updater(interval)
    return True
