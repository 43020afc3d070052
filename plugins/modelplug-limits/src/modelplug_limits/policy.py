"""The policy: reserve before each attempt, wait or refuse, settle after.

:class:`LimitsPolicy` wraps ``modelplug_stream`` innermost (``trylast``), under the
fallback policy: the fallback policy re-opens a stream for every retry and every
fallback with ``client.open_stream(..., exclude=<fallback policies>)``, which passes
through this wrapper again, so every attempt reserves on its own (seed 000's budget
meter). A reservation that did not end in a reported usage keeps its whole amount.
"""

from __future__ import annotations

import asyncio
import math
import time
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Mapping
from inspect import iscoroutine
from typing import TYPE_CHECKING, Any, TypeVar

from modelplug import (
    Cost,
    Done,
    Embeddings,
    EmbedRequest,
    Notice,
    Offer,
    Response,
    Splice,
    TranscribeRequest,
    Transcript,
    Usage,
    hookimpl,
)
from modelplug_kit import Charge, CounterStore, Outcome, Setting, to_nano

from .errors import rate_limited
from .headers import room_from_headers
from .options import LimitsOptions, load_options
from .plan import Plan, budget_error, plan_attempt, plan_embed, plan_transcribe
from .stores import choose_store, close_sqlite_counters, store_for

if TYPE_CHECKING:
    from modelplug import CallContext, Event, Request, Route, Settings

__all__ = ["POLICY_KIND", "LimitsPolicy", "default_policy", "store_for"]

POLICY_KIND = "limits"

HookWrapper = Generator[None, "AsyncIterator[Event] | None", "AsyncIterator[Event] | None"]
EmbedWrapper = Generator[None, "Awaitable[Embeddings] | None", "Awaitable[Embeddings] | None"]
TranscribeWrapper = Generator[None, "Awaitable[Transcript] | None", "Awaitable[Transcript] | None"]
Sleep = Callable[[float], Awaitable[Any]]
Answer = TypeVar("Answer", Embeddings, Transcript)  # what a call without a stream returns


class LimitsPolicy:
    """Rate pacing and budgets around every attempt.

    :param options: ``[limits]`` settings that win over the settings files (the same
        keys; they may raise what a project file may only lower).
    :param store: the counters (default: what ``[limits] store`` chooses: a stores
        plugin's when Redis is set, else this machine's SQLite file; see
        :mod:`modelplug_limits.stores`).
    :param clock: wall-clock seconds, for windows and budget periods.
    :param sleep: how to wait for room (tests pass one that only records).
    """

    name = "modelplug-limits"
    modelplug_policy = POLICY_KIND

    def __init__(
        self,
        options: Mapping[str, Any] | None = None,
        *,
        store: CounterStore | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.overrides = dict(options or {})
        self.store = store
        self.clock = clock
        self.sleep = sleep
        self._per_client: weakref.WeakKeyDictionary[
            CallContext, tuple[Settings, LimitsOptions, CounterStore]
        ] = weakref.WeakKeyDictionary()

    @hookimpl(wrapper=True, trylast=True)
    def modelplug_stream(self, route: Route, request: Request, client: CallContext) -> HookWrapper:
        return (yield from self.wrapper(route, request, client))

    @hookimpl(wrapper=True, trylast=True)
    def modelplug_embed(
        self, route: Route, request: EmbedRequest, client: CallContext
    ) -> EmbedWrapper:
        return (yield from self.embed_wrapper(route, request, client))

    @hookimpl(wrapper=True, trylast=True)
    def modelplug_transcribe(
        self, route: Route, request: TranscribeRequest, client: CallContext
    ) -> TranscribeWrapper:
        return (yield from self.transcribe_wrapper(route, request, client))

    @hookimpl
    def modelplug_close(self, client: CallContext) -> None:
        """Close the SQLite counters file this policy's store for ``client`` may be (a
        store the program gave is the program's to close)."""
        close_sqlite_counters(client)

    @hookimpl
    def modelplug_describe_route(
        self, route: Route, client: CallContext
    ) -> Awaitable[dict[str, Any]] | None:
        """For ``modelplug resolve``: what counts a call on ``route`` now, the store."""
        from .describe import describe_route

        return describe_route(self, route, client)

    def wrapper(self, route: Route, request: Request, client: CallContext) -> HookWrapper:
        """The body of a ``wrapper=True`` hook: nothing is reserved until the stream is
        read, and an error opening it passes through untouched."""
        stream = yield
        if stream is None:
            return None
        setup = self.setup(client)
        return Offer(lambda offer: self.guard(offer, stream, route, request, client, *setup))

    def embed_wrapper(
        self, route: Route, request: EmbedRequest, client: CallContext
    ) -> EmbedWrapper:
        """The body of a ``wrapper=True`` ``modelplug_embed``: reserve the inputs'
        estimate (no output tokens) before the provider's call, settle its usage after."""
        waiting = yield
        if waiting is None:
            return None
        options, store = self.setup(client)
        return self.guard_embed(waiting, route, request, client, options, store)

    async def guard_embed(
        self,
        waiting: Awaitable[Embeddings],
        route: Route,
        request: EmbedRequest,
        client: CallContext,
        options: LimitsOptions,
        store: CounterStore,
    ) -> Embeddings:
        """Reserve (waiting silently while there is no room: an embedding call has no
        stream to say so on), await the provider, settle with what it reported."""

        def plan() -> Plan:
            return plan_embed(options, route, request, client, self.clock())

        return await self.guard_call(waiting, plan, client, options, store)

    def transcribe_wrapper(
        self, route: Route, request: TranscribeRequest, client: CallContext
    ) -> TranscribeWrapper:
        """The body of a ``wrapper=True`` ``modelplug_transcribe``: reserve one request
        and the transcript's estimate before the provider's call, settle its usage and
        cost after (as for an embedding call)."""
        waiting = yield
        if waiting is None:
            return None
        options, store = self.setup(client)

        def plan() -> Plan:
            return plan_transcribe(options, route, request, client, self.clock())

        return self.guard_call(waiting, plan, client, options, store)

    async def guard_call(
        self,
        waiting: Awaitable[Answer],
        make_plan: Callable[[], Plan],
        client: CallContext,
        options: LimitsOptions,
        store: CounterStore,
    ) -> Answer:
        """Reserve for a call without a stream (waiting silently while there is no
        room: there is no stream to say so on), await the provider, settle with the
        usage and cost it reported."""
        pending: Awaitable[Answer] | None = waiting
        try:
            plan = make_plan()
            while True:
                outcome = await store.reserve(plan.charges)
                if outcome.refused is None:
                    if not plan.stale(self.clock()):
                        break
                    await store.settle(plan.refund(), [])
                else:
                    await self.sleep(self.refusal(plan, outcome, options))
                plan = make_plan()
            pending = None
            try:
                result = await waiting
            except Exception as exc:
                await self.learn_from_error(plan, exc, client, store)
                raise
        finally:
            if iscoroutine(pending):  # refused before the call: it is never made
                pending.close()
        await self.settle_usage(
            plan, result.usage, result.cost, 1.0, result.metadata, client, store
        )
        return result

    def setup(self, client: CallContext) -> tuple[LimitsOptions, CounterStore]:
        """This policy's options and store on ``client``, made on its first call."""
        cached = self._per_client.get(client)
        if cached is not None and cached[0] is client.settings:
            return cached[1], cached[2]
        options = load_options(client.settings, self.overrides)
        store = self.store or choose_store(client, options.store)
        self._per_client[client] = (client.settings, options, store)
        return options, store

    async def guard(
        self,
        offer: Offer,
        stream: AsyncIterator[Event],
        route: Route,
        request: Request,
        client: CallContext,
        options: LimitsOptions,
        store: CounterStore,
    ) -> AsyncGenerator[Any, Any]:
        """Reserve (waiting with a Notice while there is no room), pass the events
        through, settle on the Done. A consumer that takes splices (core's guard, the
        fallback policy) reads the events itself once the reservation is made, and
        sends the Done back here (see modelplug.client.splice)."""
        try:
            plan = plan_attempt(options, route, request, client, self.clock())
            while True:
                outcome = await store.reserve(plan.charges)
                if outcome.degraded:
                    yield degraded(outcome.degraded)
                if outcome.refused is None:
                    if not plan.stale(self.clock()):
                        break
                    # Counted in a window that ended on the way: undo, count again.
                    await store.settle(plan.refund(), [])
                else:
                    wait = self.refusal(plan, outcome, options)
                    yield waiting(plan, outcome, wait)
                    await self.sleep(wait)
                plan = plan_attempt(options, route, request, client, self.clock())
            try:
                if offer.accepted:
                    done: Done = yield Splice(stream)
                    said = await self.settle(plan, done.response, client, store)
                    if said:
                        yield degraded(said)
                    yield done
                    return
                async for event in stream:
                    if type(event) is Done:
                        said = await self.settle(plan, event.response, client, store)
                        if said:
                            yield degraded(said)
                    yield event
            except Exception as exc:
                said = await self.learn_from_error(plan, exc, client, store)
                if said:
                    yield degraded(said)
                raise
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    def refusal(self, plan: Plan, outcome: Outcome, options: LimitsOptions) -> float:
        """How long to wait for the refused charge; raises when that is not an option
        (a budget, or a wait past ``max_wait``)."""
        assert outcome.refused is not None
        charge = plan.charges[outcome.refused]
        budget = plan.budgets[outcome.refused]
        if budget is not None:
            spec, measure, resets = budget
            # Seconds to the period's reset; 0 when this call alone is over the limit
            # (a smaller call may fit: the model is not to be cooled down for it).
            retry: float | None = 0.0 if outcome.retry_in == math.inf else outcome.retry_in
            if spec.period == "total" and retry:
                retry = None
            raise budget_error(
                spec,
                measure,
                outcome.value,
                charge.limit or 0,
                charge.amount,
                resets,
                plan.route,
                retry,
            )
        wait = max(outcome.retry_in, 0.001)
        if wait > options.max_wait:
            raise rate_limited(plan.route, plan.what[outcome.refused], wait, options.max_wait)
        return wait

    async def settle(
        self, plan: Plan, response: Response, client: CallContext, store: CounterStore
    ) -> str | None:
        """Replace each estimate with what the server reported, and learn the room its
        headers report. Usage that was not reported keeps the whole reservation."""
        return await self.settle_usage(
            plan,
            response.usage,
            response.cost,
            response.price_factor,
            response.metadata,
            client,
            store,
        )

    async def settle_usage(
        self,
        plan: Plan,
        usage: Usage,
        cost: Cost | None,
        price_factor: float,
        metadata: Mapping[str, Any],
        client: CallContext,
        store: CounterStore,
    ) -> str | None:
        """:meth:`settle` for what an answer reported (a Response's, Embeddings' or a
        Transcript's)."""
        adjust: list[Charge] = []
        if usage.reported:
            used = usage.total_input + usage.output
            adjust += [Charge(c.key, used - c.amount) for c in plan.token_charges]
            if plan.spend_charges:
                cost = cost or client.price(plan.route, usage, price_factor)
                if cost is not None:
                    spent = to_nano(cost.amount)
                    adjust += [Charge(c.key, spent - c.amount) for c in plan.spend_charges]
        learned = self.room(plan, metadata.get("rate_limits"))
        if not adjust and not learned:
            return None
        return await store.settle(adjust, learned)

    def room(self, plan: Plan, headers: Any) -> list[Setting]:
        room = room_from_headers(headers if isinstance(headers, Mapping) else None, self.clock())
        learned = []
        if room.requests is not None and room.requests[1] > 0:
            learned.append(Setting(plan.learned[0], room.requests[0], room.requests[1]))
        if room.tokens is not None and room.tokens[1] > 0:
            learned.append(Setting(plan.learned[1], room.tokens[0], room.tokens[1]))
        return learned

    async def learn_from_error(
        self, plan: Plan, exc: Exception, client: CallContext, store: CounterStore
    ) -> str | None:
        """A 429 that says when to come back closes the model's room until then, for
        every process sharing the store; its headers say the same, when it has them."""
        learned = self.room(plan, getattr(exc, "headers", None))
        error_class = client.classify(exc, plan.route)
        if error_class.kind == "rate_limit" and not learned:
            after = error_class.retry_after
            if after:
                learned = [Setting(key, 0, after) for key in plan.learned]
        if not learned:
            return None
        try:
            return await store.settle([], learned)
        except Exception:  # the call's own error is the one to report
            return None

    def __repr__(self) -> str:
        return f"LimitsPolicy(options={self.overrides!r}, store={self.store!r})"


def waiting(plan: Plan, outcome: Outcome, wait: float) -> Notice:
    assert outcome.refused is not None
    what = plan.what[outcome.refused]
    return Notice(
        kind="wait",
        message=f"{plan.route.name}: waiting {wait:.1f} s for room in {what}",
        delay=wait,
        details={
            "phase": "rate_limit",
            "model": plan.route.name,
            "limit": what,
            "counter": plan.charges[outcome.refused].key,
        },
    )


def degraded(message: str) -> Notice:
    return Notice(kind="limits", message=message, details={"phase": "store_degraded"})


_DEFAULT: LimitsPolicy | None = None


def default_policy() -> LimitsPolicy:
    """The policy the entry point's hook uses: ``[limits]`` settings, the store they
    choose, real time."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = LimitsPolicy()
    return _DEFAULT
