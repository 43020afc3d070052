"""The calendar periods a budget counts in: UTC hours, days, ISO weeks, months, or all
time (``"total"``). A counter's key carries its period's id, so a new period starts a new
counter and the old one expires with the seconds that were left in it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = ["PERIOD_WORDS", "TOTAL_TTL", "period_window"]

TOTAL_TTL = 400 * 86400.0  # a total budget's counter outlives a year of silence
PERIOD_WORDS = {
    "call": "per call",
    "hour": "per hour",
    "day": "per day",
    "week": "per week",
    "month": "per month",
    "total": "in total",
}
"""Each period's name as a message says it (``"day"``: ``"per day"``)."""

_PERIODS: dict[str, tuple[float, float, str, str | None]] = {}


def period_window(period: str, now: float) -> tuple[str, float, str | None]:
    """The current period's id, seconds left in it, and its end (ISO 8601, UTC).

    ``period`` is ``"hour"``, ``"day"``, ``"week"`` (Monday 00:00 UTC), ``"month"`` or
    ``"total"`` (id ``"total"``, :data:`TOTAL_TTL` seconds, no end); ``now`` is a Unix
    time. At 23:00 UTC on 2026-12-07, ``period_window("day", now)`` is
    ``("2026-12-07", 3600.0, "2026-12-08T00:00:00Z")``.
    """
    if period == "total":
        return "total", TOTAL_TTL, None
    cached = _PERIODS.get(period)
    if cached is None or not cached[0] <= now < cached[1]:
        cached = _PERIODS[period] = _period(period, now)
    return cached[2], max(0.001, cached[1] - now), cached[3]


def _period(period: str, now: float) -> tuple[float, float, str, str | None]:
    moment = datetime.fromtimestamp(now, UTC)
    if period == "hour":
        start = moment.replace(minute=0, second=0, microsecond=0)
        end, name = start + timedelta(hours=1), start.strftime("%Y-%m-%dT%H")
    elif period == "day":
        start = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        end, name = start + timedelta(days=1), start.strftime("%Y-%m-%d")
    elif period == "week":  # ISO weeks: Monday 00:00 UTC
        start = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        start -= timedelta(days=start.weekday())
        end, name = start + timedelta(days=7), start.strftime("%G-W%V")
    else:  # month
        start = moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        end = (start + timedelta(days=32)).replace(day=1)
        name = start.strftime("%Y-%m")
    resets = end.strftime("%Y-%m-%dT%H:%M:%SZ")
    return start.timestamp(), end.timestamp(), name, resets
