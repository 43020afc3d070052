"""The policy object: resolves deadline names to routes and serves their streams.

The package registers a default one (the machine's clock) through its entry point; a
program, or a test, registers its own with another clock, and the default steps aside.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from modelplug import ConfigError, Endpoint, Route, hookimpl

from .clock import Clock, SystemClock
from .first_calls import FirstCalls
from .table import Deadline, deadline_named

if TYPE_CHECKING:
    from modelplug import CallContext, Event, Request, Settings
    from modelplug_kit import CounterStore

__all__ = ["POLICY_KIND", "PROVIDER", "DeadlinePolicy", "default_policy"]

POLICY_KIND = "deadline"
FILE_NAME = "deadline.sqlite3"
"""The first calls' SQLite file in the data directory (``store = "sqlite"``)."""

PROVIDER = "deadline"
"""The provider (and endpoint type) of a deadline route: ``deadline/nightly``."""


class DeadlinePolicy:
    """Named deadline routes: ``slow`` until the switch, ``fast`` after it, and ``fast``
    for one request that waited ``step_limit`` on ``slow``.

    :param clock: the time read and waited on (Unix time; tests pass their own).
    :param store: where the first call through each deadline route is recorded for
        every process using it (a :class:`modelplug_kit.CounterStore`, such as
        modelplug-limits' ``SqliteCounters``); None: each Client counts its own.
    """

    name = "modelplug-deadline"
    modelplug_policy = POLICY_KIND
    modelplug_sections = ("deadlines",)

    def __init__(self, *, clock: Clock | None = None, store: CounterStore | None = None) -> None:
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.first_calls = FirstCalls(store)

    @hookimpl(tryfirst=True)
    def modelplug_resolve(
        self, spec: str, settings: Settings, provider_type: str | None
    ) -> Route | None:
        """The route for a ``[deadlines.NAME]`` name (``nightly`` or ``deadline/nightly``)."""
        return deadline_route(spec, settings, provider_type)

    @hookimpl
    def modelplug_stream(
        self, route: Route, request: Request, client: CallContext
    ) -> AsyncIterator[Event] | None:
        """A call on a deadline route (None for every other route)."""
        if route.endpoint.type != PROVIDER:
            return None
        deadline = deadline_named(client.settings, route.model)
        if deadline is None:
            raise ConfigError(
                f"the deadline route {route.model!r} is no longer in your settings "
                "([deadlines] tables)"
            )
        from .steps import deadline_events  # the event types: not at resolve()

        return deadline_events(deadline, route, request, client, self.clock, self.switch_time)

    async def switch_time(self, client: CallContext, deadline: Deadline) -> float | None:
        """When ``deadline`` switches on ``client``: ``switch_at``, or ``switch_after``
        from the first call through it (this call when it is the first)."""
        if deadline.switch_at is not None:
            return deadline.switch_at
        if deadline.switch_after is None:
            return None
        now = self.clock.now()
        lasts = deadline.switch_after
        store = None if self.first_calls.store is not None else first_call_store(client, deadline)
        first = await self.first_calls.first(client, deadline.name, now, lasts, store)
        return first + deadline.switch_after

    def __repr__(self) -> str:
        return f"DeadlinePolicy(clock={self.clock!r}, store={self.first_calls.store!r})"


def first_call_store(client: CallContext, deadline: Deadline) -> CounterStore | None:
    """The store ``[deadlines.NAME] store`` names for the first call (None: ``client``,
    each Client counts its own)."""
    if deadline.store == "client":
        return None
    from modelplug_kit import choose_counter_store

    return choose_counter_store(
        client,
        deadline.store,
        file_name=FILE_NAME,
        setting=f"[deadlines.{deadline.name}] store",
    )


def deadline_route(spec: str, settings: Settings, provider_type: str | None) -> Route | None:
    """The Route for ``spec`` when it names a ``[deadlines.NAME]`` table."""
    name = spec
    if "/" in spec:
        provider, _, name = spec.partition("/")
        if provider != PROVIDER or provider_type not in (None, PROVIDER):
            return None
    deadline = deadline_named(settings, name)
    if deadline is None:
        return None
    return Route(provider=PROVIDER, model=deadline.name, endpoint=Endpoint(type=PROVIDER))


_DEFAULT: DeadlinePolicy | None = None


def default_policy() -> DeadlinePolicy:
    """The policy the entry point's hooks use: the machine's clock."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = DeadlinePolicy()
    return _DEFAULT
