"""Where a response's time went, from what the servers said (seed 004).

Two sources, either or both:

- llama.cpp's ``timings`` object, a sibling of ``usage`` in its answer (and on the
  final chunk of a stream): ``cache_n``, ``prompt_n``, ``prompt_ms``, ``predicted_n``,
  ``predicted_ms``, and ``draft_n`` with ``draft_n_accepted`` only when it drafted
  (``result_timings::to_json`` in its server; an unset count is -1 there).
- A proxy's timing headers, the same three names the modelplug gateway stamps:
  :data:`QUEUED_HEADER`, :data:`LOAD_HEADER`, :data:`UPSTREAM_TTFB_HEADER`, each a
  decimal number of milliseconds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from modelplug import Timings

__all__ = [
    "LOAD_HEADER",
    "QUEUED_HEADER",
    "TIMING_HEADERS",
    "UPSTREAM_TTFB_HEADER",
    "read_timings",
]

#: Time held in admission (limits, a queue) before the request was served.
QUEUED_HEADER = "X-Corrallm-Queued-Ms"
#: Time waiting for the model to be loaded; 0 when it was up.
LOAD_HEADER = "X-Corrallm-Load-Ms"
#: Time from dispatch upstream to the upstream's answer headers.
UPSTREAM_TTFB_HEADER = "X-Corrallm-Upstream-Ttfb-Ms"
TIMING_HEADERS = {
    "queued_ms": QUEUED_HEADER,
    "load_ms": LOAD_HEADER,
    "upstream_ttfb_ms": UPSTREAM_TTFB_HEADER,
}
_COUNTS = ("prompt_n", "predicted_n", "cache_n", "draft_n", "draft_n_accepted")
_DURATIONS = ("prompt_ms", "predicted_ms")


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value < 0 or value != int(value):
        return None
    return int(value)


def _ms(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return None
    return float(value)


def read_timings(body_timings: Any, headers: Mapping[str, str]) -> Timings | None:
    """The Timings that llama.cpp's ``timings`` object and the timing headers state;
    None when neither says anything. A field that is not a number (or is negative, as
    llama.cpp's unset -1) is left None, never guessed."""
    fields: dict[str, Any] = {}
    if isinstance(body_timings, Mapping):
        for name in _COUNTS:
            fields[name] = _count(body_timings.get(name))
        for name in _DURATIONS:
            fields[name] = _ms(body_timings.get(name))
    lowered = {name.lower(): value for name, value in headers.items()}
    for field, header in TIMING_HEADERS.items():
        fields[field] = _ms(lowered.get(header.lower()))
    said = {name: value for name, value in fields.items() if value is not None}
    return Timings(**said) if said else None
