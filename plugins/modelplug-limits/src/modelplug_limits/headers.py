"""What a server's rate-limit headers say about the room left, and until when.

The shapes, as the providers document them:

- OpenAI (and LiteLLM, which forwards the same names): ``x-ratelimit-remaining-requests:
  59``, ``x-ratelimit-remaining-tokens: 149984``, ``x-ratelimit-reset-requests: 1s``,
  ``x-ratelimit-reset-tokens: 6m0s`` (Go-style durations: ``1h2m3.5s``, ``20ms``).
  LiteLLM may forward an upstream's headers under ``llm_provider-x-ratelimit-...``.
- Anthropic: ``anthropic-ratelimit-requests-remaining``, ``...-requests-reset`` (an RFC
  3339 time), the same for ``tokens``, ``input-tokens`` and ``output-tokens``.

openai-compat keeps these headers in ``Response.metadata["rate_limits"]`` (names
lowercased); an error may carry its response's ``headers``. Anything unreadable is
ignored: a header never fails a call.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

__all__ = ["Room", "parse_duration", "room_from_headers"]

DEFAULT_RESET = 60.0  # a remaining count without a reset time: assume a minute
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


class Room:
    """Requests and tokens left, each with seconds until it resets."""

    def __init__(self) -> None:
        self.requests: tuple[int, float] | None = None
        self.tokens: tuple[int, float] | None = None

    def __bool__(self) -> bool:
        return self.requests is not None or self.tokens is not None


def parse_duration(text: str) -> float | None:
    """``6m0s`` -> 360.0, ``20ms`` -> 0.02, ``1.5`` -> 1.5; None when unreadable."""
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT[u] for n, u in parts)


def _reset_seconds(value: str | None, now: float) -> float:
    if value is None:
        return DEFAULT_RESET
    seconds = parse_duration(value)
    if seconds is not None:
        return seconds
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return DEFAULT_RESET
    if when.tzinfo is None:
        return DEFAULT_RESET
    return max(0.0, when.timestamp() - now)


def _count(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        number = int(float(value.strip()))
    except ValueError:
        return None
    return number if number >= 0 else None


def room_from_headers(headers: Mapping[str, Any] | None, now: float | None = None) -> Room:
    """The room a response's headers report (empty when they report none)."""
    room = Room()
    if not headers:
        return room
    try:
        lower = {str(k).lower(): str(v) for k, v in headers.items()}
    except (AttributeError, TypeError):
        return room
    now = time.time() if now is None else now
    for prefix in ("x-ratelimit-", "llm_provider-x-ratelimit-"):
        requests = _count(lower.get(f"{prefix}remaining-requests"))
        tokens = _count(lower.get(f"{prefix}remaining-tokens"))
        if requests is not None and room.requests is None:
            room.requests = (requests, _reset_seconds(lower.get(f"{prefix}reset-requests"), now))
        if tokens is not None and room.tokens is None:
            room.tokens = (tokens, _reset_seconds(lower.get(f"{prefix}reset-tokens"), now))
    prefix = "anthropic-ratelimit-"
    requests = _count(lower.get(f"{prefix}requests-remaining"))
    if requests is not None and room.requests is None:
        room.requests = (requests, _reset_seconds(lower.get(f"{prefix}requests-reset"), now))
    if room.tokens is None:
        # The tightest of the combined, input and output token limits.
        found = [
            (count, _reset_seconds(lower.get(f"{prefix}{kind}-reset"), now))
            for kind in ("tokens", "input-tokens", "output-tokens")
            if (count := _count(lower.get(f"{prefix}{kind}-remaining"))) is not None
        ]
        if found:
            room.tokens = min(found)
    return room
