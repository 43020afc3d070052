"""What a call's attempts ask of their fallback policy, and how the fallback policies on
a client are found.

It sits below :mod:`.policy`: the attempts (:mod:`.attempts`, :mod:`.embed_attempts`) and
``modelplug resolve``'s section (:mod:`.describe`) take their policy as
:class:`AttemptsPolicy`, and :mod:`.policy` imports them, so the imports run one way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from modelplug import find_policies

if TYPE_CHECKING:
    from modelplug import CallContext
    from modelplug_kit import AnyCooldownStore

    from .options import FallbackOptions

__all__ = ["POLICY_KIND", "AttemptsPolicy", "Sleep", "policies_on"]

POLICY_KIND = "fallback"
"""What :func:`modelplug.find_policies` finds this plugin's policies by."""

Sleep = Callable[[float], Awaitable[Any]]


class AttemptsPolicy(Protocol):
    """The policy as one call's attempts use it (a FallbackPolicy is one): its options
    and cooldown store on a client, its clock, sleep and jitter."""

    clock: Callable[[], float]
    sleep: Sleep
    random: Callable[[], float]

    def options_for(self, client: CallContext) -> FallbackOptions:
        """This policy's options on ``client``."""
        ...

    def store_for(self, client: CallContext) -> AnyCooldownStore:
        """The cooldown table on ``client``."""
        ...


def policies_on(client: CallContext) -> list[object]:
    """Every fallback policy registered on ``client``: the package module (entry
    point) and any FallbackPolicy objects. A re-opened stream skips them all."""
    return find_policies(client, POLICY_KIND)
