"""The two kinds of time a ``[deadlines.NAME]`` table holds: a duration (``"20m"``,
``"2h"``, ``"1d"``) and an instant (``"2026-12-08T06:00Z"``)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

__all__ = ["UNITS", "parse_duration", "parse_instant"]

UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION = re.compile(r"(?P<amount>\d+(?:\.\d+)?)\s*(?P<unit>[smhd])")


def parse_duration(value: object, where: str) -> float:
    """Seconds in ``value``: a number with a unit (``s``, ``m``, ``h``, ``d``), or a
    plain number of seconds. ``where`` names the key for the message.

    :raises ValueError: anything else (the message says what is accepted).
    """
    if isinstance(value, bool):
        raise ValueError(_duration_problem(where))
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        found = _DURATION.fullmatch(value.strip().lower())
        if found is None:
            raise ValueError(_duration_problem(where))
        seconds = float(found["amount"]) * UNITS[found["unit"]]
    else:
        raise ValueError(_duration_problem(where))
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"{where} must be longer than 0 ({_accepted()})")
    return seconds


def parse_instant(value: object, where: str) -> float:
    """The Unix time of ``value``: an ISO 8601 date and time with a zone (``Z`` or
    ``+01:00``), as a string or a TOML date-time.

    :raises ValueError: no zone (a deadline must not depend on the machine's), or not
        a date and time.
    """
    if isinstance(value, str):
        text = value.strip()
        text = text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(
                f"{where} must be a date and time with a zone, e.g. 2026-12-08T06:00Z"
            ) from None
    elif isinstance(value, datetime):
        moment = value
    else:
        raise ValueError(f"{where} must be a date and time with a zone, e.g. 2026-12-08T06:00Z")
    if moment.tzinfo is None:
        raise ValueError(f"{where} has no zone; add Z (UTC) or an offset, e.g. 2026-12-08T06:00Z")
    return moment.astimezone(UTC).timestamp()


def _accepted() -> str:
    return 'a number and a unit: s, m, h or d, e.g. "20m" or "2h"'


def _duration_problem(where: str) -> str:
    return f"{where} must be {_accepted()}"
