"""The policy: each call on a group picks a deployment, and hands a failed one over.

:class:`RouterPolicy` wraps ``modelplug_stream`` between the fallback policy (outside,
``tryfirst``) and the limits policy (inside, ``trylast``). No provider serves a group's
route, so the stream it is handed is None; it opens the deployment's stream itself with
``client.open_stream(deployment, request, exclude=<router and fallback policies>)``,
which passes through the limits again (each deployment is counted as itself). A failure
before any output that another deployment may not share (rate limit, overload, server
error, timeout, a key or model the deployment lacks) cools that deployment for the
fallback policy's cooldown times and the call goes on with another one; when none is
left the last failure goes out, to the fallback chain of the group if there is one.
"""

from __future__ import annotations

import asyncio
import random as _random
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from typing import TYPE_CHECKING, Any, TypeVar

from modelplug import (
    Done,
    ErrorClass,
    ModelError,
    ModelplugError,
    Notice,
    TextDelta,
    ThinkingDelta,
    ToolCallStart,
    estimate_tokens,
    find_policies,
    hookimpl,
)
from modelplug_kit import Charge

from .groups import GROUP_TYPE, Group, group_named, group_route, nested_group
from .state import (
    busy_charge,
    cooldown_setting,
    freed_charge,
    keys_of,
    latency_setting,
    read_states,
    seen_charge,
    window_charges,
)
from .stores import choose_store, close_sqlite_state, store_choice
from .strategies import Candidate, Picker

if TYPE_CHECKING:
    from decimal import Decimal

    from modelplug import (
        CallContext,
        Embeddings,
        EmbedRequest,
        Event,
        Request,
        Route,
        Settings,
        TranscribeRequest,
        Transcript,
    )
    from modelplug_kit import CounterStore, Setting

    from .state import State

__all__ = ["POLICY_KIND", "RouterPolicy", "default_policy"]

POLICY_KIND = "router"
FALLBACK_KIND = "fallback"
DELTAS = (TextDelta, ThinkingDelta, ToolCallStart)  # output before the Done
NEVER_HAND_OVER = frozenset({"context_overflow", "bad_request", "aborted"})
SHORT_COOLDOWN = frozenset({"rate_limit", "overloaded", "transient"})
PICK_TRIES = 64  # reads before least-busy takes its pick without checking it is still least

HookWrapper = Generator[None, "AsyncIterator[Event] | None", "AsyncIterator[Event] | None"]
EmbedWrapper = Generator[None, "Awaitable[Embeddings] | None", "Awaitable[Embeddings] | None"]
TranscribeWrapper = Generator[None, "Awaitable[Transcript] | None", "Awaitable[Transcript] | None"]
# What a one-answer call returns (Embeddings, Transcript).
Answer = TypeVar("Answer", "Embeddings", "Transcript")


class RouterPolicy:
    """Model groups balanced across their deployments.

    :param store: the counter store of the deployments' state (default: what
        ``[router] store`` chooses: a stores plugin's such as Redis, else this
        machine's SQLite file).
    :param clock: a monotonic clock in seconds, for latencies.
    :param random: the random source for ties (a seeded ``random.Random`` in tests).
    """

    name = "modelplug-router"
    modelplug_policy = POLICY_KIND
    modelplug_sections = ("groups",)

    def __init__(
        self,
        *,
        store: CounterStore | None = None,
        clock: Callable[[], float] = time.monotonic,
        random: _random.Random | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.picker = Picker(random)
        self._stores: weakref.WeakKeyDictionary[CallContext, CounterStore] = (
            weakref.WeakKeyDictionary()
        )
        self._routes: weakref.WeakKeyDictionary[CallContext, tuple[Settings, dict[str, Route]]] = (
            weakref.WeakKeyDictionary()
        )
        self._turns: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, asyncio.Lock]
        ] = weakref.WeakKeyDictionary()

    @hookimpl(tryfirst=True)
    def modelplug_resolve(self, spec: str, settings: Settings) -> Route | None:
        """A group's name as its route (as the package's own hook does), so a program
        that registers this policy without the entry points still resolves groups."""
        return group_route(settings, spec)

    @hookimpl(wrapper=True)
    def modelplug_stream(self, route: Route, request: Request, client: CallContext) -> HookWrapper:
        return (yield from self.wrapper(route, request, client))

    @hookimpl(wrapper=True)
    def modelplug_embed(
        self, route: Route, request: EmbedRequest, client: CallContext
    ) -> EmbedWrapper:
        return (yield from self.embed_wrapper(route, request, client))

    @hookimpl(wrapper=True)
    def modelplug_transcribe(
        self, route: Route, request: TranscribeRequest, client: CallContext
    ) -> TranscribeWrapper:
        return (yield from self.transcribe_wrapper(route, request, client))

    @hookimpl
    def modelplug_close(self, client: CallContext) -> None:
        """Close the SQLite state file this policy's store for ``client`` may be."""
        close_sqlite_state(client)

    @hookimpl
    def modelplug_describe_route(
        self, route: Route, client: CallContext
    ) -> Awaitable[dict[str, Any]] | None:
        """For ``modelplug resolve GROUP``: each deployment's state now."""
        from .describe import describe_route

        return describe_route(route, client, self.store_for, self.route_of)

    def wrapper(self, route: Route, request: Request, client: CallContext) -> HookWrapper:
        """The body of a ``wrapper=True`` hook: a group's route gets the router's stream;
        every other route passes through untouched."""
        stream = yield
        if route.endpoint.type != GROUP_TYPE or stream is not None:
            return stream
        group = group_named(client.settings, route.model)
        if group is None:
            return None
        return self.events(group, route, request, client)

    def embed_wrapper(
        self, route: Route, request: EmbedRequest, client: CallContext
    ) -> EmbedWrapper:
        """:meth:`wrapper` for an embedding call: a group's is balanced like a stream."""
        waiting = yield
        group = self.group_of(route, waiting, client)
        if group is None:
            return waiting
        tokens = estimate_tokens(sum(len(text) for text in request.inputs))
        exclude = self.exclude(client)
        return self.answer(
            group, route, client, tokens, lambda to: client.open_embed(to, request, exclude=exclude)
        )

    def transcribe_wrapper(
        self, route: Route, request: TranscribeRequest, client: CallContext
    ) -> TranscribeWrapper:
        """:meth:`wrapper` for a transcription: a group's is balanced like a stream (its
        tpm window counts no tokens: the audio's are not known before the answer)."""
        waiting = yield
        group = self.group_of(route, waiting, client)
        if group is None:
            return waiting
        exclude = self.exclude(client)
        return self.answer(
            group, route, client, 0, lambda to: client.open_transcribe(to, request, exclude=exclude)
        )

    def group_of(self, route: Route, served: object, client: CallContext) -> Group | None:
        """The group a call on ``route`` is balanced over; None when another plugin
        served it or the route is no group's."""
        if route.endpoint.type != GROUP_TYPE or served is not None:
            return None
        return group_named(client.settings, route.model)

    async def answer(
        self,
        group: Group,
        route: Route,
        client: CallContext,
        tokens: int,
        call: Callable[[Route], Awaitable[Answer]],
    ) -> Answer:
        """A one-answer call (embeddings, a transcription) on ``group``: a deployment
        picked and asked; a failure it may not share cools it and the next is asked, as
        for a stream that failed before output. The answer names the deployment."""
        store = self.store_for(client)
        tried: set[int] = set()
        last_error: Exception | None = None
        while True:
            taken = await self.take(group, store, client, tokens, tried)
            if taken is None:
                raise last_error or no_room(group, route)
            index, deployment_route, keys, latency = taken
            tried.add(index)
            started = self.clock()
            used: int | None = None
            sample: float | None = None
            try:
                result = await call(deployment_route)
                sample = (self.clock() - started) * 1000
                used = result.usage.total_input + result.usage.output
                return result.model_copy(
                    update={
                        "route": result.route or deployment_route,
                        "model": result.model or deployment_route.name,
                    }
                )
            except Exception as exc:
                if not hands_over(exc, deployment_route, client):
                    raise
                last_error = exc
                await self.cool_down(store, keys, exc, deployment_route, client)
            finally:
                await self.release(store, keys, tokens, used, latency, sample)

    async def cool_down(
        self,
        store: CounterStore,
        keys: dict[str, str],
        exc: Exception,
        route: Route,
        client: CallContext,
    ) -> float:
        """Cool the deployment ``route`` down after ``exc`` (the fallback policy's
        times); the seconds."""
        seconds = cooldown_for(exc, route, client)
        await store.settle([], [cooldown_setting(keys, seconds)])
        return seconds

    # -- state --------------------------------------------------------------------------

    def store_for(self, client: CallContext) -> CounterStore:
        """The counter store on ``client``: the one given, else ``[router] store``'s."""
        if self.store is not None:
            return self.store
        found = self._stores.get(client)
        if found is None:
            found = self._stores[client] = choose_store(client, store_choice(client))
        return found

    def route_of(self, client: CallContext, spec: str) -> Route:
        """A deployment's route, resolved once per client (and settings)."""
        kept = self._routes.get(client)
        if kept is None or kept[0] is not client.settings:
            kept = self._routes[client] = (client.settings, {})
        route = kept[1].get(spec)
        if route is None:
            route = kept[1][spec] = client.resolve(spec)
        return route

    def exclude(self, client: CallContext) -> list[object]:
        """What a deployment's stream skips: the router and fallback policies (the
        router hands failures over itself; the fallback chain is the group's)."""
        policies = [*find_policies(client, POLICY_KIND), *find_policies(client, FALLBACK_KIND)]
        if self not in policies:
            policies.append(self)
        return policies

    # -- one call -----------------------------------------------------------------------

    async def events(
        self, group: Group, route: Route, request: Request, client: CallContext
    ) -> AsyncIterator[Event]:
        """The call's stream: a deployment picked, its stream passed on; a failure
        before output cools it and the next deployment is tried."""
        store = self.store_for(client)
        tokens = request_tokens(request)
        tried: set[int] = set()
        last_error: Exception | None = None
        failed: str | None = None  # what the last deployment tried did, when it failed
        while True:
            taken = await self.take(group, store, client, tokens, tried)
            if taken is None:
                raise last_error or no_room(group, route)
            index, deployment_route, keys, latency = taken
            tried.add(index)
            started = self.clock()
            first: float | None = None
            produced = announced = False
            used: int | None = None
            stream: AsyncIterator[Event] | None = None
            try:
                stream = client.open_stream(deployment_route, request, exclude=self.exclude(client))
                async for event in stream:
                    if not announced:
                        # Said once the deployment answers, so whoever shows the route
                        # at the start (the gateway's header) names the one answering.
                        announced = True
                        yield picked(group, deployment_route.name, failed)
                    if isinstance(event, Done):  # the last event
                        if first is None:
                            first = self.clock()
                        usage = event.response.usage
                        used = usage.total_input + usage.output
                        event = priced(event, deployment_route, client)
                    elif not produced and isinstance(event, DELTAS):
                        produced = True  # the first output: no hand-over from now on
                        first = self.clock()
                    yield event
                stream = None  # read to its end: nothing left to close
                return
            except Exception as exc:
                if produced or not hands_over(exc, deployment_route, client):
                    raise
                last_error = exc
                seconds = await self.cool_down(store, keys, exc, deployment_route, client)
                failed = (
                    f"{deployment_route.name} failed ({describe(exc, deployment_route, client)})"
                    f" and cools down for {seconds:g} s"
                )
            finally:
                if stream is not None and hasattr(stream, "aclose"):  # left early or failed
                    await stream.aclose()
                sample = None if first is None else (first - started) * 1000
                await self.release(store, keys, tokens, used, latency, sample)

    def take(
        self,
        group: Group,
        store: CounterStore,
        client: CallContext,
        tokens: int,
        tried: set[int],
    ) -> Awaitable[tuple[int, Route, dict[str, str], int | None] | None]:
        """Pick a deployment not tried yet and take its room (in flight, rpm, tpm);
        None when none has room. ``least-busy`` picks one call at a time in a process
        (its tasks would all read the same counts at once), so only the processes race,
        and its compare-and-add settles that. The call's first pick starts the health
        probes of the group's idle deployments (see :mod:`.health`). (A plain function
        that hands back the awaitable: no coroutine of its own on every call.)"""
        if group.strategy != "least-busy":
            return self.take_one(group, store, client, tokens, tried)
        return self.take_in_turn(group, store, client, tokens, tried)

    async def take_in_turn(
        self,
        group: Group,
        store: CounterStore,
        client: CallContext,
        tokens: int,
        tried: set[int],
    ) -> tuple[int, Route, dict[str, str], int | None] | None:
        """:meth:`take_one` once the group's earlier picks in this event loop are done."""
        async with self.turn(group.name):
            return await self.take_one(group, store, client, tokens, tried)

    def turn(self, group: str) -> asyncio.Lock:
        """This event loop's lock of ``group``'s picks."""
        loop = asyncio.get_running_loop()
        turns = self._turns.get(loop)
        if turns is None:
            turns = self._turns[loop] = {}
        lock = turns.get(group)
        if lock is None:
            lock = turns[group] = asyncio.Lock()
        return lock

    async def take_one(
        self,
        group: Group,
        store: CounterStore,
        client: CallContext,
        tokens: int,
        tried: set[int],
    ) -> tuple[int, Route, dict[str, str], int | None] | None:
        """:meth:`take`'s work. A deployment whose spec does not resolve is passed."""
        first_pick = not tried
        for attempt in range(PICK_TRIES):
            states = await read_states(store, group)
            candidates = self.candidates(group, states, client, tokens, tried)
            if not candidates:
                return None
            index = self.picker.pick(group.name, group.strategy, candidates)
            deployment = group.deployments[index]
            state = states[index]
            try:
                route = self.route_of(client, deployment.spec)
            except ModelplugError:
                tried.add(index)
                continue
            if route.endpoint.type == GROUP_TYPE:  # through an alias or a role
                raise nested_group(group, deployment.spec)
            keys = keys_of(group, deployment)
            limit = deployment.max_parallel
            if group.strategy == "least-busy" and attempt < PICK_TRIES - 1:
                # Only while it is still the least busy: another process may have taken
                # it since the read (compare and add, in the store's one step).
                seen = state.busy + 1
                limit = seen if limit is None else min(limit, seen)
            charges: list[Charge] = [busy_charge(keys, limit)]
            charges += window_charges(keys, deployment, tokens)
            if deployment.health_interval is not None:
                charges.append(seen_charge(keys, deployment.health_interval))
            outcome = await store.reserve(charges)
            if outcome.refused is None:
                if first_pick and group.probed:
                    from .health import start_probes

                    start_probes(group, states, index, store, client, self.route_of, probe_cooldown)
                return index, route, keys, state.latency_ms
        return None

    def candidates(
        self,
        group: Group,
        states: list[State],
        client: CallContext,
        tokens: int,
        tried: set[int],
    ) -> list[Candidate]:
        """The deployments a call may take now: not tried, not at a ceiling, and not
        cooling down (unless every one left is: then the one free soonest)."""
        fitting = [
            (i, d, s)
            for i, (d, s) in enumerate(zip(group.deployments, states, strict=True))
            if i not in tried and fits(d.max_parallel, d.rpm, d.tpm, s, tokens)
        ]
        free = [entry for entry in fitting if entry[2].cooling <= 0]
        if not free and fitting:
            free = [min(fitting, key=lambda entry: entry[2].cooling)]
        priced = group.strategy == "cost"
        return [
            Candidate(i, d, s, self.price(client, d.spec) if priced else None) for i, d, s in free
        ]

    def price(self, client: CallContext, spec: str) -> Decimal | None:
        """Input plus output per million tokens of a deployment; None when unknown."""
        try:
            price = self.route_of(client, spec).info.price
        except ModelplugError:
            return None
        return None if price is None else price.input + price.output

    def release(
        self,
        store: CounterStore,
        keys: dict[str, str],
        tokens: int,
        used: int | None,
        latency: int | None,
        sample_ms: float | None,
    ) -> Awaitable[str | None]:
        """Give back the call's place in flight; count what it used instead of the
        estimate; add its time to the first event to the deployment's average (the
        store's settlement, to await)."""
        adjust = [freed_charge(keys)]
        if used is not None and used != tokens:
            adjust.append(Charge(key=keys["tpm"], amount=used - tokens))
        learned: list[Setting] = []
        if sample_ms is not None:
            learned.append(latency_setting(keys, latency, sample_ms))
        return store.settle(adjust, learned)


def priced(event: Done, route: Route, client: CallContext) -> Done:
    """The Done with its cost, priced here where the deployment's route is at hand
    (core would resolve the answering model's name again to price it)."""
    response = event.response
    if response.cost is not None:
        return event
    cost = client.price(route, response.usage, response.price_factor)
    if cost is None:
        return event
    return Done(response=response.model_copy(update={"cost": cost}))


def picked(group: Group, name: str, failed: str | None) -> Notice:
    """The notice of the deployment that answers: kind ``route`` for a call's first
    pick (news, not a warning), ``fallback`` when it takes over from a failed one (so
    whoever shows which route answers, the gateway's ``x-modelplug-route``, follows)."""
    if failed is None:
        return Notice(
            kind="route",
            message=f"group {group.name}: {name} answers",
            details={"group": group.name, "to": name},
        )
    return Notice(
        kind="fallback",
        message=f"group {group.name}: {failed}; {name} answers",
        details={"group": group.name, "to": name},
    )


def fits(
    max_parallel: int | None, rpm: int | None, tpm: int | None, state: State, tokens: int
) -> bool:
    """Whether one more call of ``tokens`` stays within a deployment's ceilings."""
    return (
        (max_parallel is None or state.busy < max_parallel)
        and (rpm is None or state.rpm < rpm)
        and (tpm is None or state.tpm + tokens <= tpm)
    )


def request_tokens(request: Request) -> int:
    """A cheap estimate of the tokens a request sends (its text), for the tpm window."""
    chars = len(request.system) if isinstance(request.system, str) else 0
    for message in request.messages:
        for block in message.content:
            text = getattr(block, "text", None)
            if isinstance(text, str):
                chars += len(text)
    return estimate_tokens(chars) + (request.max_tokens or 0)


def classify(exc: Exception, route: Route, client: CallContext) -> ErrorClass:
    if isinstance(exc, ModelError):
        return exc.error_class
    return client.classify(exc, route)


def hands_over(exc: Exception, route: Route, client: CallContext) -> bool:
    """Whether another deployment may answer where this one failed: a failure of the
    deployment (busy, down, its key or model), not of the request."""
    if isinstance(exc, ModelplugError) and not isinstance(exc, ModelError):
        return True  # the deployment cannot be built: no key, an unknown provider
    error_class = classify(exc, route, client)
    if error_class.kind in NEVER_HAND_OVER:
        return False
    return error_class.retryable or error_class.fallback


def cooldown_for(exc: Exception, route: Route, client: CallContext) -> float:
    """The fallback policy's cooldown for this failure (``[fallback]
    cooldown_rate_limit`` or ``cooldown_other``), at least what the server asked."""
    options = client.settings.plugin_options(FALLBACK_KIND)
    if isinstance(exc, ModelplugError) and not isinstance(exc, ModelError):
        return float(options.get("cooldown_other", 600.0))
    error_class = classify(exc, route, client)
    if error_class.kind in SHORT_COOLDOWN:
        seconds = float(options.get("cooldown_rate_limit", 60.0))
    else:
        seconds = float(options.get("cooldown_other", 600.0))
    return max(seconds, error_class.retry_after or 0.0)


def probe_cooldown(exc: Exception, route: Route, client: CallContext) -> float | None:
    """A failed health probe's cooldown: a failed call's (:func:`cooldown_for`), for a
    failure a call would be handed over for, or no answer in time; None for any other
    (the probe's own fault, say nothing of the deployment)."""
    if isinstance(exc, TimeoutError) or hands_over(exc, route, client):
        return cooldown_for(exc, route, client)
    return None


def describe(exc: Exception, route: Route, client: CallContext) -> str:
    if isinstance(exc, ModelplugError) and not isinstance(exc, ModelError):
        return type(exc).__name__
    return classify(exc, route, client).kind


def no_room(group: Group, route: Route) -> ModelError:
    """Every deployment is at a ceiling (or tried): a rate limit the fallback policy
    may wait out or fall back from."""
    return ModelError(
        f"every deployment of the group {group.name!r} is at its rpm, tpm or max_parallel "
        "ceiling; raise them in [groups] or add a deployment",
        error_class=ErrorClass(
            kind="rate_limit", retryable=True, fallback=True, retry_after=1.0, reason="busy"
        ),
        route=route,
    )


_DEFAULT: RouterPolicy | None = None


def default_policy() -> RouterPolicy:
    """The policy the entry point's hooks use: the store ``[router] store`` chooses."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = RouterPolicy()
    return _DEFAULT
