"""The store interfaces the policies share with the stores that hold their state.

Two tables outlive a call: the fallback policy's cooldowns (which models failed lately,
and for how much longer to skip them) and the limits policy's counters (rate windows and
budgets). Each sits behind a protocol here, in the kit rather than in its policy, so a
plugin that keeps them elsewhere (modelplug-redis) implements them knowing only the kit,
and a policy takes any store that satisfies them. The in-process implementations are in
:mod:`modelplug_kit.memory_stores`; the SQLite files stay with their policies.

Times are *relative* seconds everywhere, so stores need no shared clock (Redis ``SET key
PX ms`` / ``PTTL key``). Amounts are whole numbers: requests, tokens, and money in
nano-units of its currency, so a store never does floating-point money.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias, runtime_checkable

__all__ = [
    "AnyCooldownStore",
    "AsyncCooldownStore",
    "Charge",
    "CooldownStore",
    "CounterStore",
    "Outcome",
    "Setting",
]

# -- cooldowns ----------------------------------------------------------------------------


@runtime_checkable
class CooldownStore(Protocol):
    """Where cooldowns live, keyed by ``provider/model``.

    A store that can list what cools down (for ``modelplug cooldowns``) has a fourth
    method, ``cooling()``: every key cooling down and its seconds left, as a dict (or a
    coroutine of one).
    """

    def mark(self, key: str, seconds: float) -> None:
        """Skip ``key`` for the next ``seconds`` (never shortens a longer cooldown)."""

    def remaining(self, key: str) -> float:
        """Seconds ``key`` is still cooling down; 0 when it is free."""

    def clear(self, key: str) -> None:
        """Forget ``key``'s cooldown (it just answered)."""


@runtime_checkable
class AsyncCooldownStore(Protocol):
    """The same three methods as coroutines, for a store across the network (Redis):
    the policy awaits them. A store that cannot reach its backend answers from its own
    memory (or raises, when it is set to fail closed) rather than hang."""

    async def mark(self, key: str, seconds: float) -> None:
        """Skip ``key`` for the next ``seconds`` (never shortens a longer cooldown)."""

    async def remaining(self, key: str) -> float:
        """Seconds ``key`` is still cooling down; 0 when it is free."""

    async def clear(self, key: str) -> None:
        """Forget ``key``'s cooldown (it just answered)."""


AnyCooldownStore: TypeAlias = CooldownStore | AsyncCooldownStore
"""What the fallback policy takes as its ``store``: either kind; it awaits what is
awaitable."""

# -- counters -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Charge:
    """One amount taken from one counter.

    ``kind="count"``: the counter (0 when absent) plus ``amount`` must stay within
    ``limit``; a new counter lives ``ttl`` seconds (its window). ``kind="countdown"``:
    a room the server told us about (``remaining`` in a rate-limit header); when the
    counter exists, it must hold at least ``amount`` and goes down by it; when it does
    not, the charge always fits. ``refresh``: every write renews the ``ttl`` (a total
    budget's counter lives until it has been unused that long). ``grace``: the counter
    lives that much longer than its window, and a refusal's wait still ends with the
    window: a caller whose clock runs a little behind never finds window N gone (and
    re-created empty) while it still counts as window N.
    """

    key: str
    amount: int
    limit: int | None = None
    ttl: float = 60.0
    kind: Literal["count", "countdown"] = "count"
    refresh: bool = False  # every write renews the TTL (a total budget's counter)
    grace: float = 0.0  # the counter outlives its window by this much (clock drift)


@dataclass(frozen=True)
class Setting:
    """A counter set to ``value`` for ``ttl`` seconds (what a rate-limit header said).

    ``room``: a countdown charge reads it (the room a server reported). False for a
    value only read back (the gateway's last cost of a call): a store may then know that
    no room exists and answer a reservation of countdowns alone without asking.
    """

    key: str
    value: int
    ttl: float
    room: bool = True


@dataclass(frozen=True)
class Outcome:
    """What a reservation did.

    :param refused: the index of the first charge that did not fit (nothing was
        taken), or None when every charge was taken.
    :param value: that counter's value.
    :param retry_in: seconds until that counter's window ends (``inf``: it never will,
        the amount alone is over the limit).
    :param degraded: a store problem the call went on despite (fail-open), for a Notice.
    """

    refused: int | None = None
    value: int = 0
    retry_in: float = 0.0
    degraded: str | None = None


@runtime_checkable
class CounterStore(Protocol):
    """Where rate windows and budget counters live. Every method is one atomic step: a
    reservation is a list of :class:`Charge` objects applied all or nothing, so two
    callers (tasks, threads, processes) never both take the last room."""

    async def reserve(self, charges: Sequence[Charge]) -> Outcome:
        """Take every charge, or none and say which did not fit."""
        ...

    async def settle(self, adjust: Sequence[Charge], learned: Sequence[Setting]) -> str | None:
        """Add each ``adjust`` amount (may be negative) to its counter *if it still
        exists* (a window that ended is not re-created), and set each ``learned``
        counter. Returns a degradation message (fail-open) or None."""
        ...

    async def read(self, keys: Sequence[str]) -> list[tuple[int, float] | None]:
        """Each counter's value and seconds left, or None when absent."""
        ...
