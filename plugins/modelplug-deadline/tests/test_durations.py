"""The duration and instant parsers: every input ends in seconds or a ValueError."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplug_deadline.durations import UNITS, parse_duration, parse_instant


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("20m", 1200), ("2h", 7200), ("1d", 86400), ("1.5h", 5400), (" 2H ", 7200)],
)
def test_parse_duration_reads_each_unit(text: str, seconds: float) -> None:
    assert parse_duration(text, "step_limit") == seconds


def test_parse_duration_takes_a_number_as_seconds() -> None:
    assert parse_duration(30, "step_limit") == 30.0


@pytest.mark.parametrize("value", ["", "20", "20 minutes", "m", "-5m", "0m", True, None, 0, [1]])
def test_parse_duration_refuses_with_the_key_named(value: object) -> None:
    with pytest.raises(ValueError, match="step_limit"):
        parse_duration(value, "step_limit")


@given(st.integers(min_value=1, max_value=10**6), st.sampled_from(sorted(UNITS)))
def test_parse_duration_is_the_amount_times_the_unit(amount: int, unit: str) -> None:
    assert parse_duration(f"{amount}{unit}", "k") == amount * UNITS[unit]


@given(st.one_of(st.text(), st.integers(), st.floats(), st.none(), st.booleans()))
def test_parse_duration_any_input_is_seconds_or_a_value_error(value: object) -> None:
    try:
        seconds = parse_duration(value, "k")
    except ValueError as exc:
        assert "k " in str(exc)
    else:
        assert 0 < seconds < float("inf")


def test_parse_instant_reads_z_and_offsets() -> None:
    z = parse_instant("2026-12-08T06:00Z", "switch_at")
    assert parse_instant("2026-12-08T07:00+01:00", "switch_at") == z
    assert z == 1796709600.0


@given(st.text())
def test_parse_instant_any_text_is_a_time_or_a_value_error(text: str) -> None:
    try:
        parse_instant(text, "switch_at")
    except ValueError as exc:
        assert "switch_at" in str(exc)
