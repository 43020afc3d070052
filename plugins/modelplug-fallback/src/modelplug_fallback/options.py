"""The ``[fallback]`` settings table, validated (a plain dataclass: no pydantic)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from modelplug import Settings, read_options, warn

__all__ = ["FallbackOptions", "load_options"]


@dataclass(frozen=True)
class FallbackOptions:
    """How hard to try. Times are seconds.

    - ``retries``: retries of the same model after a retryable error (0: none).
    - ``backoff``: the first wait of our own schedule; it doubles per retry, up to
      ``max_backoff``, with ``jitter`` (a fraction) of random slack either way.
    - ``max_retry_after``: the longest Retry-After we wait out. A server that asks for
      longer will not answer soon: the call falls back at once (or gives up when no
      fallback is left) and the model cools down for what the server asked.
    - ``budget``: the wall-clock a call may spend before a retry wait would start
      beyond it (waits that would end past it are not made).
    - ``cooldown_rate_limit``: how long a model that was rate limited, overloaded or
      failed with a server error is skipped by later calls (when another candidate
      exists); ``cooldown_other`` is that for every other failure that allows a
      fallback (auth, quota, not found, unreachable).
    - ``store``: where cooldowns live. ``"auto"``: Redis when a stores plugin offers it
      (modelplug-redis with ``[redis] url``), else this machine's SQLite file in the
      data directory; ``"sqlite"``: that file; ``"memory"``: this process only;
      ``"redis"``: Redis or an error. Only the user's own file (or code) chooses.
    """

    retries: int = field(default=2, metadata={"ge": 0, "le": 100})
    backoff: float = field(default=1.0, metadata={"ge": 0})
    max_backoff: float = field(default=30.0, metadata={"ge": 0})
    jitter: float = field(default=0.2, metadata={"ge": 0, "le": 1})
    max_retry_after: float = field(default=30.0, metadata={"ge": 0})
    budget: float = field(default=300.0, metadata={"ge": 0})
    cooldown_rate_limit: float = field(default=60.0, metadata={"ge": 0})
    cooldown_other: float = field(default=600.0, metadata={"ge": 0})
    store: Literal["auto", "sqlite", "memory", "redis"] = "auto"


def load_options(settings: Settings, overrides: Mapping[str, Any] | None = None) -> FallbackOptions:
    """The ``[fallback]`` table merged under ``overrides``, read the kit's way: a wrong
    value is a ConfigError naming the key (a string is never echoed: it may be a token);
    an unknown key a warning naming the known ones. The store is the user's choice: a
    project file's ``store`` is ignored, with a warning."""
    options = read_options(settings, "fallback", FallbackOptions, overrides=overrides)
    trusted = {**settings.plugin_options("fallback", project=False), **(overrides or {})}
    store = trusted.get("store", "auto")
    if options.store != store:
        warn(
            "[fallback] store: a project file cannot choose where your cooldowns live; "
            f"ignored (the store stays {store!r}; set it in your own settings file)"
        )
        options = replace(options, store=store)
    return options
