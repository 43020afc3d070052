"""The policy: retry the same model, then fall back along the chain, with cooldowns.

:class:`FallbackPolicy` is a plugin object: the package registers a default one through
its entry point, and a program may register its own (with its own options, store,
clock and sleep). Either way a re-opened stream skips every fallback policy on the
client (pluggy's ``subset_hook_caller``), so policies never nest.
"""

from __future__ import annotations

import asyncio
import random as _random
import sys
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from modelplug.errors import (
    ConfigError,
    ErrorClass,
    MissingKeyError,
    ModelError,
    ModelplugError,
    NoProviderError,
    PluginLoadError,
    UnknownProviderError,
    describe_error,
)
from modelplug.plugins import hookimpl
from modelplug.types import (
    Done,
    Event,
    Notice,
    Request,
    Response,
    Route,
    TextDelta,
    ThinkingDelta,
    ToolCallStart,
)

from . import notices
from .backoff import retry_wait
from .chain import Candidates, chain_specs
from .cooldowns import SHARED, CooldownStore
from .options import FallbackOptions, load_options

if TYPE_CHECKING:
    from modelplug.client import Client
    from modelplug.settings import Settings

__all__ = ["FallbackPolicy", "default_policy", "policies_on"]

HookWrapper = Generator[None, "AsyncIterator[Event] | None", "AsyncIterator[Event] | None"]
Sleep = Callable[[float], Awaitable[Any]]

# Failures that would fail again however long we waited.
NEVER_RETRY = frozenset({"context_overflow", "bad_request", "auth", "aborted"})
# Failures whose cooldown is the short one: the provider is busy, not broken for us.
SHORT_COOLDOWN = frozenset({"rate_limit", "overloaded", "transient"})
# What the caller has seen once one of these is yielded: never restart after it.
OUTPUT = (TextDelta, ThinkingDelta, ToolCallStart)
# Errors that say a candidate cannot be used at all (configuration, not the model).
UNBUILDABLE = (MissingKeyError, UnknownProviderError, NoProviderError, ConfigError, PluginLoadError)


class FallbackPolicy:
    """Retries, fallback chains and cooldowns for every provider's streams.

    :param options: ``[fallback]`` settings that win over the settings files
        (``retries``, ``budget``, ``cooldown_rate_limit``...).
    :param store: the cooldown table (default: the process-wide one).
    :param clock: a monotonic clock in seconds, for the retry budget.
    :param sleep: how to wait (``asyncio.sleep``; tests pass one that only records).
    :param random: a source of floats in [0, 1) for the jitter.
    """

    name = "modelplug-fallback"

    def __init__(
        self,
        options: Mapping[str, Any] | None = None,
        *,
        store: CooldownStore | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self.overrides = dict(options or {})
        self.store: CooldownStore = store if store is not None else SHARED
        self.clock = clock
        self.sleep = sleep
        self.random = random
        self._options_by_client: weakref.WeakKeyDictionary[
            Client, tuple[Settings, FallbackOptions]
        ] = weakref.WeakKeyDictionary()

    @hookimpl(wrapper=True)
    def modelplug_stream(self, route: Route, request: Request, client: Client) -> HookWrapper:
        return (yield from self.wrapper(route, request, client))

    def wrapper(self, route: Route, request: Request, client: Client) -> HookWrapper:
        """The body of a ``wrapper=True`` hook: take the provider's stream, wrap it.

        An error raised while the provider *opens* its stream (a missing key, say) is
        let through unless this policy can do something about it, so a call without
        a fallback chain fails exactly as it would without the plugin.
        """
        try:
            stream = yield
        except Exception as exc:
            if not self._takes_open_error(exc, route, client):
                raise
            return self.wrap(None, route, request, client, first_error=exc)
        if stream is None:
            return None
        return self.wrap(stream, route, request, client)

    def wrap(
        self,
        stream: AsyncIterator[Event] | None,
        route: Route,
        request: Request,
        client: Client,
        *,
        first_error: Exception | None = None,
    ) -> AsyncIterator[Event]:
        """The stream the caller sees: ``stream`` (or ``first_error``) on ``route``,
        then retries and fallbacks as the options allow."""
        call = _Call(self, self.options_for(client), route, request, client)
        return call.events(stream, first_error)

    def options_for(self, client: Client) -> FallbackOptions:
        """This policy's options on ``client``, validated on the client's first call
        (and again only if its settings are replaced), not on every call."""
        cached = self._options_by_client.get(client)
        if cached is not None and cached[0] is client.settings:
            return cached[1]
        options = load_options(client.settings, self.overrides)
        self._options_by_client[client] = (client.settings, options)
        return options

    def _takes_open_error(self, exc: Exception, route: Route, client: Client) -> bool:
        has_chain = bool(chain_specs(client.settings, route))
        if isinstance(exc, UNBUILDABLE):
            return has_chain
        error_class = client.classify(exc, route)
        if error_class.kind == "aborted":
            return False
        retries = self.options_for(client).retries
        retryable = error_class.retryable and error_class.kind not in NEVER_RETRY and retries > 0
        return retryable or (error_class.fallback and has_chain)

    def __repr__(self) -> str:
        return f"FallbackPolicy(options={self.overrides!r}, store={self.store!r})"


_DEFAULT: FallbackPolicy | None = None


def default_policy() -> FallbackPolicy:
    """The policy the entry point's hook uses: settings from ``[fallback]``, the shared
    cooldown table, real time."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = FallbackPolicy()
    return _DEFAULT


def policies_on(client: Client) -> list[object]:
    """Every fallback policy registered on ``client``: the package module (entry
    point) and any FallbackPolicy objects. A re-opened stream skips them all."""
    package = sys.modules.get(__package__ or "modelplug_fallback")
    return [
        plugin
        for plugin in client.host.pm.get_plugins()
        if (package is not None and plugin is package) or isinstance(plugin, FallbackPolicy)
    ]


@dataclass
class _Step:
    """The decision after a failure: notices to yield, then exactly one of: raise
    ``error``, sleep ``delay`` and retry, or switch to the candidate ``switch_to``."""

    notices: list[Notice]
    error: BaseException | None = None
    delay: float | None = None
    switch_to: tuple[int, Route] | None = None


class _Call:
    """One call's attempts: its candidates, what was tried, the budget clock.

    A call that succeeds on the route asked for never needs its candidates nor the
    policies to skip when re-opening, so both are found on the first failure.
    """

    def __init__(
        self,
        policy: FallbackPolicy,
        options: FallbackOptions,
        route: Route,
        request: Request,
        client: Client,
    ) -> None:
        self.policy = policy
        self.options = options
        self.route = route
        self.request = request
        self.client = client
        self.tried: list[str] = []
        self.skipped: list[tuple[str, str]] = []
        self.tried_cooling = False
        self.started = 0.0

    @cached_property
    def candidates(self) -> Candidates:
        return Candidates(self.client, self.route)

    @cached_property
    def exclude(self) -> list[object]:
        """The policies a re-opened stream skips: every one on the client, and this one."""
        policies = policies_on(self.client)
        if self.policy not in policies:
            policies.append(self.policy)
        return policies

    # -- choosing and opening candidates ----------------------------------------------

    def pick(self, start: int) -> tuple[int, Route] | None:
        """The next candidate from ``start`` that can be built and is not cooling down;
        failing that the last one that can be built (the last is always tried)."""
        store = self.policy.store
        last_cooling: tuple[int, Route] | None = None
        for index in range(start, len(self.candidates)):
            spec = self.candidates.specs[index]
            try:
                route = self.candidates.route(index)
            except ModelplugError as exc:
                self.skipped.append((spec, exc.message))
                continue
            if route.name in self.tried or route.name == self.route.name:
                continue
            if store.remaining(route.name) > 0:
                last_cooling = (index, route)
                continue
            return index, route
        return last_cooling

    def open(self, route: Route) -> AsyncIterator[Event]:
        if not self.tried or self.tried[-1] != route.name:
            self.tried.append(route.name)
        self.tried_cooling = self.policy.store.remaining(route.name) > 0
        return self.client.open_stream(route, self.request, exclude=self.exclude)

    # -- the loop -----------------------------------------------------------------------

    async def events(
        self, first: AsyncIterator[Event] | None, first_error: Exception | None
    ) -> AsyncIterator[Event]:
        options, policy = self.options, self.policy
        self.started = policy.clock()
        current, index = self.route, 0
        stream, pending = first, first_error
        cooling = policy.store.remaining(current.name) > 0
        # A model that failed lately is skipped silently while another can answer.
        chosen = self.pick(1) if cooling else None
        if chosen is None:
            # Nothing else could answer: the asked model is tried after all, and the
            # candidates found unusable will be met (and reported) again if it fails.
            self.skipped = []
            self.tried.append(current.name)
            self.tried_cooling = cooling
        else:
            await _close(stream)
            stream, pending = None, None
            index, current = chosen
            if self.skipped:
                yield notices.skipped_only(self.route.name, self.skipped, current.name)
                self.skipped = []
        retries = 0
        waited = False
        produced = False
        text: list[str] = []
        thought: list[str] = []
        try:
            while True:
                try:
                    if pending is not None:
                        opening_error, pending = pending, None
                        raise opening_error
                    if stream is None:
                        stream = self.open(current)
                    async for event in stream:
                        if waited:
                            yield notices.recovered(current.name, retries, options.retries)
                            waited = False
                        if type(event) is TextDelta:
                            # The hot path, by identity: isinstance on a pydantic class
                            # costs ~0.1 us, three of them a third of this layer.
                            produced = True
                            text.append(event.text)
                            yield event
                            continue
                        if isinstance(event, Done):
                            yield self.done(current, event)
                            return
                        if isinstance(event, OUTPUT):
                            produced = True
                            if isinstance(event, TextDelta):
                                text.append(event.text)
                            elif isinstance(event, ThinkingDelta):
                                thought.append(event.text)
                        yield event
                    return  # ended without Done: core reports it
                except Exception as exc:
                    await _close(stream)
                    stream = None
                    if produced:
                        # Never restart after output: it would repeat text or tool calls.
                        error = self.after_output(exc, current, text, thought)
                        if error is exc:
                            raise
                        raise error from exc
                    step = self.next_step(exc, current, index, retries)
                    for notice in step.notices:
                        yield notice
                    if step.error is not None:
                        if step.error is exc:
                            raise
                        raise step.error from exc
                    if step.delay is not None:
                        await policy.sleep(step.delay)
                        retries += 1
                        waited = True
                    elif step.switch_to is not None:
                        index, current = step.switch_to
                        retries = 0
                        waited = False
        finally:
            await _close(stream)

    def next_step(self, exc: Exception, current: Route, index: int, retries: int) -> _Step:
        """What to do after ``current`` failed with ``exc`` before any output: wait and
        retry it, switch to the next candidate, or raise."""
        options = self.options
        said: list[Notice] = []
        if isinstance(exc, UNBUILDABLE):
            reason = exc.message  # a missing key, say: skip it, say why
        else:
            error_class = self.client.classify(exc, current)
            if error_class.kind == "aborted":
                return _Step(said, error=exc)
            if error_class.retryable and error_class.kind not in NEVER_RETRY and options.retries:
                wait = retry_wait(retries + 1, error_class.retry_after, options, self.policy.random)
                spent = self.policy.clock() - self.started
                last = notices.describe(error_class)
                if retries >= options.retries:
                    why = f"no retries left; last error: {last}"
                elif spent + wait.delay > options.budget:
                    why = (
                        f"{last}, and waiting {wait.delay:.1f} s more would pass the "
                        f"{options.budget:g} s budget ({spent:.1f} s spent)"
                    )
                else:
                    said.append(
                        notices.retry_wait(
                            current.name, error_class, retries + 1, options.retries, wait
                        )
                    )
                    return _Step(said, delay=wait.delay)
                said.append(
                    notices.gave_up(current.name, error_class, retries, options.retries, why)
                )
            if not error_class.fallback:
                return _Step(said, error=self.final(exc, current, error_class))
            self.cool_down(current, error_class)
            reason = notices.describe(error_class)
        chosen = self.pick(index + 1)
        if chosen is None:
            if self.skipped:
                said.append(notices.skipped_only(current.name, self.skipped, None))
            return _Step(said, error=self.final(exc, current, None))
        said.append(notices.fallback(current.name, chosen[1].name, reason, self.skipped))
        self.skipped = []
        return _Step(said, switch_to=chosen)

    # -- outcomes -----------------------------------------------------------------------

    def cool_down(self, route: Route, error_class: ErrorClass) -> None:
        options = self.options
        if error_class.kind in SHORT_COOLDOWN:
            seconds = max(options.cooldown_rate_limit, error_class.retry_after or 0.0)
        else:
            seconds = options.cooldown_other
        if seconds > 0:
            self.policy.store.mark(route.name, seconds)

    def done(self, route: Route, event: Done) -> Done:
        response = self.answered(route, event.response)
        return event if response is event.response else Done(response=response)

    def answered(self, route: Route, response: Response) -> Response:
        """The Response, named for and priced as the model that answered."""
        if self.tried_cooling:
            self.policy.store.clear(route.name)  # a cooling model answered: it is back
        if route is self.route:
            return response
        updates: dict[str, Any] = {}
        if response.model is None:
            updates["model"] = route.name
            if response.message.model is None:
                updates["message"] = response.message.model_copy(update={"model": route.name})
        if response.cost is None:
            # Price it here, where the fallback's own route (and its info) is at hand.
            cost = self.client.price(route, response.usage, response.price_factor)
            if cost is not None:
                updates["cost"] = cost
        return response.model_copy(update=updates) if updates else response

    def final(self, exc: Exception, route: Route, error_class: ErrorClass | None) -> BaseException:
        """The error to raise when nothing is left to try: as it is on the route asked
        for; named for the fallback that failed last otherwise."""
        if route is self.route or isinstance(exc, ModelplugError):
            return exc  # core passes modelplug's own errors (a missing key...) through
        error_class = error_class or self.client.classify(exc, route)
        tried = ", ".join(self.tried)
        return ModelError(
            f"{describe_error(exc, error_class)} (tried {tried})",
            error_class=error_class,
            route=route,
        )

    def after_output(
        self, exc: Exception, route: Route, text: list[str], thought: list[str]
    ) -> BaseException:
        """A failure after output, raised as it is with the output so far (never
        restarted: that would repeat text or tool calls)."""
        if route is self.route or (
            isinstance(exc, ModelplugError) and not isinstance(exc, ModelError)
        ):
            return exc  # core attaches the partial output it saw to a model error
        partial = getattr(exc, "partial", None)
        if not isinstance(partial, Response):
            partial = Response.partial(route.name, "".join(text), "".join(thought))
        if isinstance(exc, ModelError):
            if exc.partial is None:
                exc.partial = partial
            return exc
        error_class = self.client.classify(exc, route)
        return ModelError(
            describe_error(exc, error_class), error_class=error_class, route=route, partial=partial
        )


async def _close(stream: AsyncIterator[Event] | None) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()
