"""Budgets' shared pieces: money counted in whole nano-units (a reservation rounds up, a
settlement to nearest) and the UTC calendar periods a budget's counter is keyed by."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from modelplug_kit import PERIOD_WORDS, from_nano, period_window, to_nano


def test_to_nano_rounds_a_reservation_up_and_a_settlement_to_nearest() -> None:
    amount = Decimal("0.0000000014")  # 1.4 nano-units
    assert to_nano(amount, up=True) == 2
    assert to_nano(amount) == 1
    assert to_nano(Decimal("5.00")) == 5_000_000_000


def test_from_nano_gives_back_the_amount() -> None:
    assert from_nano(to_nano(Decimal("0.006"))) == Decimal("0.006")
    assert from_nano(0) == Decimal(0)


def at(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> float:
    return datetime(year, month, day, hour, minute, tzinfo=UTC).timestamp()


def test_a_day_runs_from_midnight_to_midnight_utc() -> None:
    assert period_window("day", at(2026, 12, 7, 23, 0)) == (
        "2026-12-07",
        3600.0,
        "2026-12-08T00:00:00Z",
    )


def test_an_hour_and_a_month_end_where_the_calendar_says() -> None:
    assert period_window("hour", at(2026, 12, 7, 15, 30)) == (
        "2026-12-07T15",
        1800.0,
        "2026-12-07T16:00:00Z",
    )
    name, left, resets = period_window("month", at(2026, 2, 28, 12, 0))
    assert (name, resets) == ("2026-02", "2026-03-01T00:00:00Z")
    assert left == 12 * 3600.0


def test_the_next_period_starts_a_new_window() -> None:
    # The window of a period is cached: a time past its end must not reuse it.
    assert period_window("day", at(2026, 12, 7, 12, 0))[0] == "2026-12-07"
    assert period_window("day", at(2026, 12, 8, 0, 0))[0] == "2026-12-08"
    assert period_window("day", at(2026, 12, 7, 12, 0))[0] == "2026-12-07"


def test_a_total_budget_never_resets() -> None:
    name, left, resets = period_window("total", at(2026, 12, 7))
    assert (name, resets) == ("total", None)
    assert left > 365 * 86400


def test_every_period_has_words_for_messages() -> None:
    assert PERIOD_WORDS["day"] == "per day"
    assert PERIOD_WORDS["total"] == "in total"
