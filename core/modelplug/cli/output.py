"""How the commands write: flushed pieces, usage lines, money."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from modelplug.contract.types import Usage

__all__ = ["DIM", "RESET", "money", "usage_line", "write"]

DIM = "\x1b[2m"
RESET = "\x1b[0m"


def write(stream: TextIO, text: str) -> None:
    stream.write(text)
    stream.flush()


def usage_line(model: str, usage: Usage, cost: Any) -> str:
    parts = [
        f"{model}:",
        f"input {usage.input}",
        f"output {usage.output}",
    ]
    if usage.cache_read or usage.cache_write:
        parts.append(f"cache read {usage.cache_read} write {usage.cache_write}")
    if usage.reasoning:
        parts.append(f"reasoning {usage.reasoning}")
    if not usage.reported:
        parts.append("(estimated)")
    parts.append(f"cost {money(cost.amount, cost.currency)}" if cost else "cost unknown")
    return " ".join(parts)


def money(amount: Decimal, currency: str) -> str:
    text = f"{amount.normalize():f}" if amount else "0"
    return f"${text}" if currency == "USD" else f"{text} {currency}"
