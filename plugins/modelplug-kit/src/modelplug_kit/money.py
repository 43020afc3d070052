"""Money as whole nano-units, so stores (and Redis's Lua) never add floats.

A reservation rounds up, a settlement rounds to nearest: a budget is never counted
short. 10**9 nano-units per unit of currency leave room for 9 million units in a
double's exact integer range, which is what Lua in Redis counts in. The limits policy's
budgets and the gateway's per-key budgets count in these units, in one store.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_HALF_EVEN, Decimal

__all__ = ["NANO", "from_nano", "to_nano"]

NANO = Decimal(10) ** 9


def to_nano(amount: Decimal, *, up: bool = False) -> int:
    """``amount`` in nano-units (rounded up for a reservation)."""
    rounding = ROUND_CEILING if up else ROUND_HALF_EVEN
    return int((amount * NANO).to_integral_value(rounding=rounding))


def from_nano(value: int) -> Decimal:
    """The amount ``value`` nano-units make (``to_nano``'s inverse), normalized."""
    return (Decimal(value) / NANO).normalize()
