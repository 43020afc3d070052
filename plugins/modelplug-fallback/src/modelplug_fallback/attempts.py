"""One call's attempts: the loop that streams, and the decision after each failure.

:meth:`Attempts.events` is the only async generator between the provider's stream and
the caller, and only until the first output: then it hands the rest to a caller that
takes splices (core's call guard) and is sent the Done back (see modelplug.client.splice); a
caller that does not gets every event passed on with two checks each. Everything that
happens after a failure is decided by plain methods that return a :class:`Step`
(notices to yield, then raise, wait and retry, or switch).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable
from dataclasses import dataclass, field
from functools import cached_property
from inspect import isawaitable
from typing import TYPE_CHECKING, Any

from modelplug import (
    ConfigError,
    Done,
    Embeddings,
    EmbedRequest,
    ErrorClass,
    Event,
    MissingKeyError,
    ModelError,
    ModelplugError,
    NoProviderError,
    Notice,
    Offer,
    PluginLoadError,
    Request,
    Response,
    Route,
    Splice,
    SpliceReader,
    TextDelta,
    ThinkingDelta,
    ToolCallStart,
    TranscribeRequest,
    Transcript,
    UnknownProviderError,
    describe_error,
)

from . import notices
from .backoff import Wait, retry_wait
from .chain import Candidates
from .policy_protocol import AttemptsPolicy, policies_on

if TYPE_CHECKING:
    from modelplug import CallContext

    from .options import FallbackOptions

__all__ = ["Attempts", "Step"]

# Failures that would fail again however long we waited.
NEVER_RETRY = frozenset({"context_overflow", "bad_request", "auth", "aborted"})
# Failures whose cooldown is the short one: the provider is busy, not broken for us.
SHORT_COOLDOWN = frozenset({"rate_limit", "overloaded", "transient"})
# What the caller has seen once one of these is yielded: never restart after it.
OUTPUT = (TextDelta, ThinkingDelta, ToolCallStart)
# Errors that say a candidate cannot be used at all (configuration, not the model).
UNBUILDABLE = (MissingKeyError, UnknownProviderError, NoProviderError, ConfigError, PluginLoadError)


@dataclass
class Step:
    """The decision after a failure: ``notices`` to yield, then exactly one of: raise
    ``error``, sleep ``delay`` and retry, or switch to the candidate ``switch_to``."""

    notices: list[Notice] = field(default_factory=list)
    error: BaseException | None = None
    delay: float | None = None
    switch_to: tuple[int, Route] | None = None


class Attempts:
    """One call: its candidates, what was tried, the retry count and the budget clock.

    A call that succeeds on the route asked for never needs its candidates nor the
    policies to skip when re-opening, so both are found on the first failure.
    """

    def __init__(
        self,
        policy: AttemptsPolicy,
        options: FallbackOptions,
        route: Route,
        request: Request | EmbedRequest | TranscribeRequest,
        client: CallContext,
    ) -> None:
        self.policy = policy
        self.store = policy.store_for(client)
        self.options = options
        self.route = route
        self.request = request
        self.client = client
        self.tried: list[str] = []
        self.skipped: list[tuple[str, str]] = []
        self.tried_cooling = False
        self.retries = 0
        self.started = 0.0

    async def remaining(self, key: str) -> float:
        """Seconds ``key`` still cools down, from a sync or an async store."""
        left = self.store.remaining(key)
        if isawaitable(left):
            left = await left
        return float(left)

    @cached_property
    def candidates(self) -> Candidates:
        return Candidates(self.client, self.route)

    @cached_property
    def exclude(self) -> list[object]:
        """The policies a re-opened stream skips: every fallback policy on the client,
        and this one. Other policies (limits) stay in, so they wrap every attempt."""
        policies = policies_on(self.client)
        if self.policy not in policies:
            policies.append(self.policy)
        return policies

    # -- the loop -----------------------------------------------------------------------

    async def events(
        self, offer: Offer, stream: AsyncIterator[Event] | None, pending: Exception | None
    ) -> AsyncGenerator[Any, Any]:
        """The stream the caller sees: ``stream`` (or the error ``pending`` that opening
        it raised), then retries and fallbacks as the options allow. The inner loop is
        the only per-event code; every decision is a method returning a Step.

        Once output has been shown no attempt is restarted, so when the caller takes
        splices (``offer.accepted``) the rest of the stream is handed to it there
        (``yield Splice``), and its Done is sent back, or its failure thrown in, at that
        ``yield`` (see modelplug.client.splice).
        """
        self.started = self.policy.clock()
        index, current = 0, self.route
        cooling = self.store.remaining(current.name)
        if not isinstance(cooling, int | float):  # an async store's coroutine
            cooling = await cooling
        if cooling > 0:  # the model asked for failed lately: start elsewhere if we can
            index, current, said = await self.begin_elsewhere()
            if index:
                await _close(stream)
                stream, pending = None, None
            for notice in said:
                yield notice
        else:
            self.start_here(False)
        waited = produced = False
        handing = offer.accepted
        text: list[str] = []
        thought: list[str] = []
        # Reads the attempt's stream; an inner policy (limits) may hand it its rest.
        reader: SpliceReader | None = None
        try:
            while True:
                try:
                    if pending is not None:
                        opening_error, pending = pending, None
                        raise opening_error
                    if reader is None:
                        reader = SpliceReader(stream or await self.open(current))
                        stream = None
                    while True:
                        async for event in reader.source:
                            if type(event) is Splice:
                                # An inner policy (limits) made its reservation.
                                reader.take(event)
                                break
                            if waited:
                                yield notices.recovered(
                                    current.name, self.retries, self.options.retries
                                )
                                waited = False
                            if type(event) is TextDelta:
                                # The hot path, by identity: isinstance on a pydantic
                                # class costs ~0.1 us, three of them a third of this layer.
                                produced = True
                                text.append(event.text)
                                yield event
                                if handing:
                                    break
                                continue
                            if isinstance(event, Done):
                                for shown in await reader.done(event):
                                    if isinstance(shown, Done):
                                        yield await self.answer(current, shown)
                                        return
                                    yield shown
                                return  # an inner policy made no Done: core reports it
                            if isinstance(event, OUTPUT):
                                produced = True
                                if isinstance(event, TextDelta):
                                    text.append(event.text)
                                elif isinstance(event, ThinkingDelta):
                                    thought.append(event.text)
                            yield event
                            if handing and produced:
                                break
                        else:
                            return  # ended without Done: core reports it
                        if handing and produced:
                            break
                except Exception as exc:
                    if reader is not None and reader.finishers:
                        last_words, raised = await reader.failed(exc)
                        for event in last_words:
                            yield event
                        if raised is None:
                            return
                        exc = raised
                    await _close(reader or stream)
                    reader = stream = None
                    step = await self.after_failure(exc, current, index, produced, text, thought)
                    for notice in step.notices:
                        yield notice
                    if step.error is exc:
                        raise
                    if step.error is not None:
                        raise step.error from exc
                    index, current, waited = await self.take(step, index, current)
                    continue
                break
            # Output was shown and the caller takes splices: it reads on from here.
            assert reader is not None
            failure: BaseException | None = None
            cause: Exception | None = None
            try:
                done = yield Splice(reader.source)
            except Exception as exc:
                last_words, cause = await reader.failed(exc)
                for event in last_words:
                    yield event
                if cause is None:
                    return
                # The caller saw the output and keeps it: the partial is its to attach.
                failure = self.after_output(cause, current, None, None)
            if failure is not None:
                if failure is cause or cause is None:
                    raise failure
                raise failure from cause
            for shown in await reader.done(done):
                if isinstance(shown, Done):
                    yield await self.answer(current, shown)
                    return
                yield shown
        finally:
            await _close(reader or stream)

    async def answer(self, route: Route, event: Done) -> Done:
        """The Done of ``route``: a cooling model that answered is back."""
        if self.tried_cooling:
            await _settled(self.store.clear(route.name))
        return self.done(route, event)

    async def begin_elsewhere(self) -> tuple[int, Route, list[Notice]]:
        """Where to start while the route asked for cools down: another candidate that
        can answer (index > 0, with the notices to yield first), else the route asked
        for after all (index 0)."""
        moved = await self.start_elsewhere()
        if moved is None:
            # Candidates found unusable on the way are met (and reported) again if the
            # asked model fails.
            self.start_here(True)
            return 0, self.route, []
        (index, route), said = moved
        return index, route, said

    async def after_failure(
        self,
        exc: Exception,
        current: Route,
        index: int,
        produced: bool,
        text: list[str],
        thought: list[str],
    ) -> Step:
        """The Step after ``current`` failed: never a restart once output was yielded
        (it would repeat text or tool calls), else retry, switch or raise."""
        if produced:
            return Step(error=self.after_output(exc, current, text, thought))
        return await self.next_step(exc, current, index)

    async def take(self, step: Step, index: int, current: Route) -> tuple[int, Route, bool]:
        """Carry out a retry (sleep) or a switch; the candidate to try next and whether
        a recovery is to be announced on its first event."""
        if step.delay is not None:
            await self.policy.sleep(step.delay)
            self.retries += 1
            return index, current, True
        assert step.switch_to is not None
        self.retries = 0
        next_index, route = step.switch_to
        return next_index, route, False

    def start_here(self, cooling: bool) -> None:
        """Start on the route asked for (``cooling``: although it is cooling down)."""
        self.skipped = []
        self.tried.append(self.route.name)
        self.tried_cooling = cooling

    async def start_elsewhere(self) -> tuple[tuple[int, Route], list[Notice]] | None:
        """Where to start when the route asked for is cooling down and another candidate
        can answer (skipped silently, but for candidates that could not be built);
        None to start on the route asked for after all."""
        chosen = await self.pick(1)
        if chosen is None:
            return None
        said = []
        if self.skipped:
            said.append(notices.skipped_only(self.route.name, self.skipped, chosen[1].name))
            self.skipped = []
        return chosen, said

    # -- choosing and opening candidates ----------------------------------------------

    async def pick(self, start: int) -> tuple[int, Route] | None:
        """The next candidate from ``start`` that can be built and is not cooling down;
        failing that the last one that can be built (the last is always tried)."""
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
            if await self.remaining(route.name) > 0:
                last_cooling = (index, route)
                continue
            return index, route
        return last_cooling

    async def open(self, route: Route) -> AsyncIterator[Event]:
        if not self.tried or self.tried[-1] != route.name:
            self.tried.append(route.name)
        self.tried_cooling = await self.remaining(route.name) > 0
        assert isinstance(self.request, Request)
        return self.client.open_stream(route, self.request, exclude=self.exclude)

    async def open_embed(self, route: Route) -> Awaitable[Embeddings]:
        """The embedding call on ``route``, through every policy but the fallback ones."""
        if not self.tried or self.tried[-1] != route.name:
            self.tried.append(route.name)
        self.tried_cooling = await self.remaining(route.name) > 0
        assert isinstance(self.request, EmbedRequest)
        return self.client.open_embed(route, self.request, exclude=self.exclude)

    async def open_transcribe(self, route: Route) -> Awaitable[Transcript]:
        """The transcription call on ``route``, through every policy but the fallback
        ones."""
        if not self.tried or self.tried[-1] != route.name:
            self.tried.append(route.name)
        self.tried_cooling = await self.remaining(route.name) > 0
        assert isinstance(self.request, TranscribeRequest)
        return self.client.open_transcribe(route, self.request, exclude=self.exclude)

    # -- after a failure before any output --------------------------------------------

    async def next_step(self, exc: Exception, current: Route, index: int) -> Step:
        """What to do after ``current`` failed with ``exc`` before any output: wait and
        retry it, switch to the next candidate, or raise."""
        if isinstance(exc, UNBUILDABLE):
            return await self.switch(exc, current, index, exc.message, [])  # a missing key, say
        error_class = self.client.classify(exc, current)
        if error_class.kind == "aborted":
            return Step(error=exc)
        said: list[Notice] = []
        if self.may_retry(error_class):
            wait = retry_wait(
                self.retries + 1, error_class.retry_after, self.options, self.policy.random
            )
            why = self.why_not_wait(error_class, wait)
            if why is None:
                notice = notices.retry_wait(
                    current.name, error_class, self.retries + 1, self.options.retries, wait
                )
                return Step([notice], delay=wait.delay)
            said.append(
                notices.gave_up(current.name, error_class, self.retries, self.options.retries, why)
            )
        if not error_class.fallback:
            return Step(said, error=self.final(exc, current, error_class))
        await self.cool_down(current, error_class)
        return await self.switch(exc, current, index, notices.describe(error_class), said)

    def may_retry(self, error_class: ErrorClass) -> bool:
        return (
            error_class.retryable
            and error_class.kind not in NEVER_RETRY
            and self.options.retries > 0
        )

    def why_not_wait(self, error_class: ErrorClass, wait: Wait) -> str | None:
        """Why the retry ``wait`` is not made (None: make it). A server that asks for
        more than ``max_retry_after`` will not answer soon: waiting the capped time
        would only buy pointless retries."""
        options = self.options
        last = notices.describe(error_class)
        if wait.asked is not None and wait.asked > options.max_retry_after:
            return (
                f"{last}; the server asked to wait {notices.seconds(wait.asked)}, more "
                f"than max_retry_after ({options.max_retry_after:g} s)"
            )
        if self.retries >= options.retries:
            return f"no retries left; last error: {last}"
        spent = self.policy.clock() - self.started
        if spent + wait.delay > options.budget:
            return (
                f"{last}, and waiting {wait.delay:.1f} s more would pass the "
                f"{options.budget:g} s budget ({spent:.1f} s spent)"
            )
        return None

    async def switch(
        self, exc: Exception, current: Route, index: int, reason: str, said: list[Notice]
    ) -> Step:
        """Move on to the next usable candidate after ``current``, or raise when none."""
        chosen = await self.pick(index + 1)
        if chosen is None:
            if self.skipped:
                said.append(notices.skipped_only(current.name, self.skipped, None))
            return Step(said, error=self.final(exc, current, None))
        said.append(notices.fallback(current.name, chosen[1].name, reason, self.skipped))
        self.skipped = []
        return Step(said, switch_to=chosen)

    async def cool_down(self, route: Route, error_class: ErrorClass) -> None:
        """Skip ``route`` in later calls: a busy model for at least the short cooldown
        (longer when the server asked for longer); any other failure for what it said
        (a Retry-After, a budget's reset), else the long cooldown."""
        options = self.options
        asked = error_class.retry_after
        if error_class.kind in SHORT_COOLDOWN:
            seconds = max(options.cooldown_rate_limit, asked or 0.0)
        else:
            seconds = asked if asked is not None else options.cooldown_other
        if seconds > 0:
            await _settled(self.store.mark(route.name, seconds))

    # -- outcomes -----------------------------------------------------------------------

    def done(self, route: Route, event: Done) -> Done:
        response = self.answered(route, event.response)
        return event if response is event.response else Done(response=response)

    def answered(self, route: Route, response: Response) -> Response:
        """The Response, named for and priced as the model that answered."""
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
        self, exc: Exception, route: Route, text: list[str] | None, thought: list[str] | None
    ) -> BaseException:
        """A failure after output, raised as it is with the output so far (never
        restarted: that would repeat text or tool calls). ``text`` None: the caller
        read the output itself (a splice) and attaches the partial, named for
        ``route``, the error's route."""
        if route is self.route or (
            isinstance(exc, ModelplugError) and not isinstance(exc, ModelError)
        ):
            return exc  # core attaches the partial output it saw to a model error
        partial = getattr(exc, "partial", None)
        if not isinstance(partial, Response):
            partial = (
                None
                if text is None
                else Response.partial(route.name, "".join(text), "".join(thought or []))
            )
        if isinstance(exc, ModelError):
            if exc.partial is None:
                exc.partial = partial
            return exc
        error_class = self.client.classify(exc, route)
        return ModelError(
            describe_error(exc, error_class), error_class=error_class, route=route, partial=partial
        )


async def _settled(result: object) -> None:
    """Wait for an async store's write; a sync store's has happened already."""
    if isawaitable(result):
        await result


async def _close(stream: object) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()
