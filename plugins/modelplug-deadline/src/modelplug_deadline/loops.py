"""Deadline routes that lead back to themselves: ``[deadlines.a] slow = "b"`` and
``[deadlines.b] slow = "a"`` would call each other without end (through aliases and
roles too), so a call on either is refused before anything is sent, the loop named."""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug import ConfigError, ModelplugError

from .table import SECTION, Deadline, deadline_named

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["refuse_loops"]

PROVIDER = "deadline"


def refuse_loops(client: CallContext, deadline: Deadline) -> None:
    """Raise a ConfigError when ``slow`` or ``fast`` of ``deadline``, or of a deadline
    route they name, leads back to one already on the way."""
    _walk(client, deadline, [deadline.name])


def _walk(client: CallContext, deadline: Deadline, path: list[str]) -> None:
    for key in ("slow", "fast"):
        try:
            route = client.resolve(getattr(deadline, key))
        except ModelplugError:
            continue  # said where the call uses that route, as without this check
        if route.endpoint.type != PROVIDER:
            continue
        if route.model in path:
            loop = " -> ".join(f"[{SECTION}.{name}]" for name in [*path, route.model])
            raise ConfigError(
                f"deadline routes call each other without end: {loop} (through their "
                "slow and fast); make one of them a provider route"
            )
        inner = deadline_named(client.settings, route.model)
        if inner is not None:
            _walk(client, inner, [*path, route.model])
