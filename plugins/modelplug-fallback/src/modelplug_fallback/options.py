"""The ``[fallback]`` settings table, validated."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplug.errors import ConfigError
from modelplug.settings import Settings
from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["FallbackOptions", "load_options"]


class FallbackOptions(BaseModel):
    """How hard to try. Times are seconds.

    - ``retries``: retries of the same model after a retryable error (0: none).
    - ``backoff``: the first wait of our own schedule; it doubles per retry, up to
      ``max_backoff``, with ``jitter`` (a fraction) of random slack either way.
    - ``max_retry_after``: the longest Retry-After we wait out; a longer request is cut
      to this.
    - ``budget``: the wall-clock a call may spend before a retry wait would start
      beyond it (waits that would end past it are not made).
    - ``cooldown_rate_limit``: how long a model that was rate limited, overloaded or
      failed with a server error is skipped by later calls (when another candidate
      exists); ``cooldown_other`` is that for every other failure that allows a
      fallback (auth, quota, not found, unreachable).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    retries: int = Field(default=2, ge=0, le=100)
    backoff: float = Field(default=1.0, ge=0)
    max_backoff: float = Field(default=30.0, ge=0)
    jitter: float = Field(default=0.2, ge=0, le=1)
    max_retry_after: float = Field(default=30.0, ge=0)
    budget: float = Field(default=300.0, ge=0)
    cooldown_rate_limit: float = Field(default=60.0, ge=0)
    cooldown_other: float = Field(default=600.0, ge=0)


def load_options(settings: Settings, overrides: Mapping[str, Any] | None = None) -> FallbackOptions:
    """The ``[fallback]`` table merged under ``overrides``; a wrong key or value is a
    ConfigError that names it."""
    raw = {**settings.plugin_options("fallback"), **(overrides or {})}
    try:
        return FallbackOptions.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'fallback'}: {e['msg']}" for e in exc.errors()
        )
        known = ", ".join(FallbackOptions.model_fields)
        raise ConfigError(f"[fallback] settings: {problems} (known settings: {known})") from None
