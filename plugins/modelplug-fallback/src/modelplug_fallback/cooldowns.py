"""The process's cooldown table: which models failed lately, and for how much longer to
skip them.

Every Client in the process shares :data:`SHARED` when ``[fallback] store = "memory"``,
keyed by ``provider/model``. The interfaces a cooldown store implements
(``CooldownStore``, ``AsyncCooldownStore``) and the in-memory table itself
(``MemoryCooldowns``) are the kit's (:mod:`modelplug_kit.stores`), so a store kept
elsewhere (modelplug-redis) needs only the kit; the policy awaits whatever is awaitable.
A store that can list what cools down (for ``modelplug cooldowns``) has a fourth method,
``cooling()``: every key cooling down and its seconds left, as a dict (or a coroutine of
one).
"""

from __future__ import annotations

from modelplug_kit import MemoryCooldowns

__all__ = ["SHARED"]

SHARED = MemoryCooldowns()
"""The table every policy uses unless it is given its own store."""
