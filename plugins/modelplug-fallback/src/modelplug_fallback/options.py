"""The ``[fallback]`` settings table, validated (a plain dataclass: no pydantic)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplug.plugin import ConfigError, Settings

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
    """

    retries: int = field(default=2, metadata={"min": 0, "max": 100})
    backoff: float = field(default=1.0, metadata={"min": 0})
    max_backoff: float = field(default=30.0, metadata={"min": 0})
    jitter: float = field(default=0.2, metadata={"min": 0, "max": 1})
    max_retry_after: float = field(default=30.0, metadata={"min": 0})
    budget: float = field(default=300.0, metadata={"min": 0})
    cooldown_rate_limit: float = field(default=60.0, metadata={"min": 0})
    cooldown_other: float = field(default=600.0, metadata={"min": 0})


_FIELDS = {f.name: f for f in dataclasses.fields(FallbackOptions)}


def load_options(settings: Settings, overrides: Mapping[str, Any] | None = None) -> FallbackOptions:
    """The ``[fallback]`` table merged under ``overrides``; a wrong key or value is a
    ConfigError that names it (a string value is never echoed: it may be a token)."""
    raw = {**settings.plugin_options("fallback"), **(overrides or {})}
    problems = [p for key, value in raw.items() if (p := _problem(key, value))]
    if problems:
        known = ", ".join(_FIELDS)
        raise ConfigError(f"[fallback] settings: {'; '.join(problems)} (known settings: {known})")
    values: dict[str, Any] = {
        k: float(v) if _FIELDS[k].type == "float" else v for k, v in raw.items()
    }
    return FallbackOptions(**values)


def _problem(key: str, value: Any) -> str | None:
    spec = _FIELDS.get(key)
    if spec is None:
        return f"{key}: unknown setting"
    if spec.type == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{key}: expected a whole number, got {type(value).__name__}"
    elif isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return f"{key}: expected a number of seconds, got {type(value).__name__}"
    low, high = spec.metadata.get("min"), spec.metadata.get("max")
    if low is not None and value < low:
        return f"{key}: must be at least {low}, got {value!r}"
    if high is not None and value > high:
        return f"{key}: must be at most {high}, got {value!r}"
    return None
