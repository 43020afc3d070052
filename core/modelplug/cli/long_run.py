"""What ``modelplug chat`` shows of a long run: a retry's wait as it happens, and the
total spend when the chat ends.

On a terminal the wait is one live line on stderr, counting down and rewritten in place
("429 from anthropic: retrying in 4 s (2/3)"), cleared when the call recovers; elsewhere
(a pipe, a log file) each wait, recovery and give-up is the policy's own plain line. The total is
one line: "cost: $0.0012 (3 calls, 1,234 tokens)", naming what no table priced rather
than counting it as free.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, TextIO

from modelplug.cli.output import money, write

if TYPE_CHECKING:
    from modelplug.contract.observers import RetryEvent, UsageEvent

__all__ = ["RetryLine", "Spend", "retry_line"]

CLEAR = "\r\x1b[K"


def retry_line(event: RetryEvent, left: float) -> str:
    """``429 from anthropic: retrying in 4 s (2/3)``: what the wait is, with ``left``
    seconds to go."""
    provider = event.route.partition("/")[0] or "the provider"
    what = str(event.status) if event.status is not None else (event.reason or "a failure")
    seconds = f"{left:.0f}" if left >= 10 or left == int(left) else f"{left:.1f}"
    return f"{what} from {provider}: retrying in {seconds} s ({event.attempt}/{event.max_attempts})"


class RetryLine:
    """The ``on_retry`` of the chat: a live countdown on a terminal, plain lines
    elsewhere. :meth:`close` ends a countdown a failed call left running."""

    def __init__(
        self,
        stream: TextIO,
        live: bool,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.stream = stream
        self.live = live
        self.sleep = sleep
        self.ticker: asyncio.Task[None] | None = None
        self.shown = False

    async def __call__(self, event: RetryEvent) -> None:
        self.close()
        if event.outcome == "waiting":
            if not self.live:  # a log keeps the policy's whole line
                write(self.stream, f"modelplug: {event.message}\n")
                return
            self.show(retry_line(event, event.wait_s))
            # Counts down on the call's own loop while the policy sleeps; the next
            # event (or the call's end) stops it.
            self.ticker = asyncio.get_running_loop().create_task(self.count_down(event))
            return
        if event.outcome == "gave_up" or not self.live:
            write(self.stream, f"modelplug: {event.message}\n")

    async def count_down(self, event: RetryEvent) -> None:
        left = event.wait_s
        while left > 1:  # whole seconds down to 1; the last one is not redrawn
            await self.sleep(1.0)
            left -= 1
            self.show(retry_line(event, left))

    def show(self, line: str) -> None:
        write(self.stream, f"{CLEAR}modelplug: {line}")
        self.shown = True

    def close(self) -> None:
        """Stop the countdown and clear its line."""
        if self.ticker is not None:
            self.ticker.cancel()
            self.ticker = None
        if self.shown:
            write(self.stream, CLEAR)
            self.shown = False


@dataclass
class Spend:
    """The ``on_usage`` of the chat: every finished call's tokens and cost, totalled."""

    calls: int = 0
    tokens: int = 0
    priced: dict[str, Decimal] = field(default_factory=dict)
    unpriced: dict[str, int] = field(default_factory=dict)

    def add(self, event: UsageEvent) -> None:
        self.calls += 1
        self.tokens += event.usage.total
        if event.cost is None:
            self.unpriced[event.route] = self.unpriced.get(event.route, 0) + 1
        else:
            currency = event.cost.currency
            self.priced[currency] = self.priced.get(currency, Decimal(0)) + event.cost.amount

    def line(self) -> str:
        """``cost: $0.0012 (3 calls, 1,234 tokens)``; what no table priced is named."""
        calls = f"{self.calls:,} call{'s' if self.calls != 1 else ''}"
        counted = f"({calls}, {self.tokens:,} tokens)"
        if not self.unpriced:
            amounts = " + ".join(
                money(amount, currency) for currency, amount in self.priced.items()
            )
            return f"cost: {amounts} {counted}"
        names = ", ".join(sorted(self.unpriced))
        if not self.priced:
            return f"cost: unknown, no price is known for {names} {counted}"
        amounts = " + ".join(money(amount, currency) for currency, amount in self.priced.items())
        missing = sum(self.unpriced.values())
        return (
            f"cost: {amounts} and {missing:,} unpriced call{'s' if missing != 1 else ''} "
            f"(no price is known for {names}) {counted}"
        )
