"""A budget per week counts in ISO weeks (Monday 00:00 UTC to the next Monday)."""

from __future__ import annotations

from datetime import UTC, datetime

from modelplug_kit import PERIOD_WORDS, period_window
from modelplug_limits.options import PERIODS


def test_week_is_a_period() -> None:
    assert "week" in PERIODS
    assert PERIOD_WORDS["week"] == "per week"


def test_week_period_runs_monday_to_monday() -> None:
    # Wednesday 2026-12-02 12:00 UTC is in ISO week 49, which began Monday 2026-11-30.
    now = datetime(2026, 12, 2, 12, 0, tzinfo=UTC).timestamp()
    name, left, resets = period_window("week", now)
    assert name == "2026-W49"
    assert resets == "2026-12-07T00:00:00Z"
    assert abs(left - (4 * 86400 + 12 * 3600)) < 1e-6


def test_week_period_at_a_year_edge_uses_the_iso_year() -> None:
    # Friday 2027-01-01 belongs to ISO week 53 of 2026.
    now = datetime(2027, 1, 1, 0, 0, tzinfo=UTC).timestamp()
    name, _, resets = period_window("week", now)
    assert name == "2026-W53"
    assert resets == "2027-01-04T00:00:00Z"
