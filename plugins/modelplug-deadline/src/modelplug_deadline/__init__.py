"""modelplug-deadline: named deadline routes, cheap until a deadline, then fast.

A ``[deadlines.NAME]`` table names a route usable wherever a model spec is (the
Client, the CLI, aliases, roles, the gateway): requests go to ``slow`` (a Batch route,
say) until the switch, then to ``fast``; one request that waited ``step_limit`` on
``slow`` is cancelled there and sent to ``fast``. See the README.

Public names (loaded on first use): :class:`DeadlinePolicy` (register one with your
own clock), :class:`SystemClock`, :func:`parse_duration`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from modelplug import find_policies, hookimpl

if TYPE_CHECKING:
    from modelplug import CallContext, Event, Request, Route, Settings

    from .clock import SystemClock
    from .durations import parse_duration
    from .policy import DeadlinePolicy

__version__ = "2.0.0.dev0"
__all__ = [
    "DeadlinePolicy",
    "SystemClock",
    "modelplug_close",
    "modelplug_resolve",
    "modelplug_stream",
    "parse_duration",
]

modelplug_policy = "deadline"
"""This module is a deadline policy (see :func:`modelplug.find_policies`)."""
modelplug_sections = ("deadlines",)
"""The settings section this plugin reads: ``[deadlines.NAME]`` (core warns of no other)."""

_WHERE = {"DeadlinePolicy": "policy", "SystemClock": "clock", "parse_duration": "durations"}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'modelplug_deadline' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


@hookimpl(tryfirst=True)
def modelplug_resolve(spec: str, settings: Settings, provider_type: str | None) -> Route | None:
    """The route for a name in ``[deadlines]`` (``nightly``, or ``deadline/nightly``);
    None for every other spec, so the provider plugins resolve those."""
    if not settings.plugin_options("deadlines"):
        return None  # no deadline route is set: nothing to import
    from .policy import deadline_route

    return deadline_route(spec, settings, provider_type)


@hookimpl
def modelplug_stream(
    route: Route, request: Request, client: CallContext
) -> AsyncIterator[Event] | None:
    """A call on a deadline route, with the machine's clock, unless a program
    registered its own DeadlinePolicy (that one serves it)."""
    if route.endpoint.type != "deadline":
        return None
    from .policy import DeadlinePolicy, default_policy

    if any(isinstance(p, DeadlinePolicy) for p in find_policies(client, modelplug_policy)):
        return None
    return default_policy().modelplug_stream(route, request, client)


@hookimpl
def modelplug_close(client: CallContext) -> None:
    """Close this process's connection to the first calls' SQLite file for ``client``
    (a deadline with ``store = "sqlite"`` opened it; the next call opens it again)."""
    policy = sys.modules.get(f"{__name__}.policy")
    if policy is not None:  # never imported: no deadline was called
        from modelplug_kit import close_counter_file

        close_counter_file(client, policy.FILE_NAME)
