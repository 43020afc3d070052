"""A policy hands the rest of a stream to its consumer (modelplug.client.splice): core reads the
provider's events itself, sends the policy the Done or throws it the failure, shows
what the policy yields then, and closes a waiting policy on an abort. A consumer that
knows nothing of splices reads the same policy as a plain stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

import pytest
from modelplug import Offer, Splice, SpliceReader, hookimpl
from modelplug.contract.errors import ModelError
from modelplug.contract.types import Done, Event, Notice, Request, Route, TextDelta
from modelplug.testing import FakeModel, text


class Policy:
    """A wrapper policy that hands over right away and records what reaches it."""

    name = "recording-policy"

    def __init__(self, tag: str = "policy") -> None:
        self.tag = tag
        self.resumed = 0  # times its generator ran on, after the start
        self.got: list[str] = []
        self.closed = False
        self.spliced: list[bool] = []

    @hookimpl(wrapper=True)
    def modelplug_stream(self, route: Route, request: Request, client: Any) -> Any:
        stream = yield
        if stream is None:
            return None
        return Offer(lambda offer: self.guard(offer, stream))

    async def guard(self, offer: Offer, stream: AsyncIterator[Event]) -> AsyncGenerator[Any, Any]:
        self.spliced.append(offer.accepted)
        try:
            yield Notice(kind="limits", message=f"{self.tag}: before")
            if offer.accepted:
                try:
                    done = yield Splice(stream)
                except Exception as exc:
                    self.got.append(f"failure: {exc}")
                    yield Notice(kind="limits", message=f"{self.tag}: after the failure")
                    raise
                self.got.append(f"done: {done.response.text}")
                yield Notice(kind="limits", message=f"{self.tag}: after the done")
                yield done
                return
            async for event in stream:
                self.resumed += 1
                if isinstance(event, Done):
                    self.got.append(f"done: {event.response.text}")
                    yield Notice(kind="limits", message=f"{self.tag}: after the done")
                yield event
        finally:
            self.closed = True


class Outer(Policy):
    """The same, outside every other wrapper."""

    @hookimpl(wrapper=True, tryfirst=True)
    def modelplug_stream(self, route: Route, request: Request, client: Any) -> Any:
        return (yield from Policy.modelplug_stream(self, route, request, client))


class Provider:
    """A provider (``<name>/m``) whose stream is ``events()``."""

    def __init__(self, name: str, events: Callable[[], AsyncIterator[Event]]) -> None:
        self.name = name
        self.events = events

    @hookimpl
    def modelplug_resolve(self, spec: str) -> Route | None:
        return Route(provider=self.name, model="m") if spec == f"{self.name}/m" else None

    @hookimpl
    def modelplug_stream(self, route: Route) -> AsyncIterator[Event] | None:
        return self.events() if route.provider == self.name else None


async def hanging() -> AsyncIterator[Event]:
    """A word, then a wait for ever."""
    yield TextDelta(text="first")
    await asyncio.sleep(3600)
    yield TextDelta(text="never")


async def failing() -> AsyncIterator[Event]:
    """Two words, then a dropped connection."""
    yield TextDelta(text="two ")
    yield TextDelta(text="words")
    raise ConnectionResetError("the connection dropped")


def messages(events: list[Event]) -> list[str]:
    return [e.message for e in events if isinstance(e, Notice)]


def test_core_reads_the_rest_itself_and_sends_the_policy_the_done(make_client: Any) -> None:
    policy = Policy()
    client = make_client(FakeModel([text("one two three")]), policy)

    events = list(client.stream("fake/m", "hi"))

    assert policy.spliced == [True]
    assert policy.resumed == 0  # not one event passed through the policy's generator
    assert messages(events) == ["policy: before", "policy: after the done"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "one two three"
    assert isinstance(events[-1], Done) and events[-1].response.text == "one two three"
    assert policy.got == ["done: one two three"] and policy.closed


def test_a_failure_of_the_rest_is_thrown_into_the_policy_and_raised_after_its_notices(
    make_client: Any,
) -> None:
    policy = Policy()
    client = make_client(Provider("failing", failing), policy)
    seen: list[Event] = []

    with pytest.raises(ModelError, match="the connection dropped") as caught:
        for event in client.stream("failing/m", "hi"):
            seen.append(event)

    assert policy.got == ["failure: the connection dropped"] and policy.closed
    assert messages(seen) == ["policy: before", "policy: after the failure"]
    # What was shown before the failure is kept.
    assert caught.value.partial is not None and caught.value.partial.text == "two words"


def test_nested_policies_finish_innermost_first(make_client: Any) -> None:
    outer, inner = Outer("outer"), Policy("inner")
    client = make_client(FakeModel([text("done")]), inner, outer)

    events = list(client.stream("fake/m", "hi"))

    # `inner` wraps the provider's stream and `outer` wraps inner's: core accepts
    # outer's offer, whose rest is inner's offer, which core accepts in turn.
    order = messages(events)
    assert order[-2:] == ["inner: after the done", "outer: after the done"]
    assert outer.spliced == [True] and inner.spliced == [True]
    assert outer.resumed == inner.resumed == 0
    assert isinstance(events[-1], Done)


def test_an_abort_closes_the_waiting_policy(make_client: Any) -> None:
    policy = Policy()
    client = make_client(Provider("hanging", hanging), policy)

    for event in client.stream("hanging/m", "hi"):
        if isinstance(event, TextDelta):
            break

    assert policy.closed and policy.got == []


def test_a_consumer_that_does_not_splice_reads_the_same_policy_plainly() -> None:
    policy = Policy()

    async def provider() -> AsyncIterator[Event]:
        yield TextDelta(text="plain")

    async def read() -> list[Event]:
        offer = Offer(lambda o: policy.guard(o, provider()))
        return [event async for event in offer]

    events = asyncio.run(read())
    assert policy.spliced == [False]
    assert [type(e) for e in events] == [Notice, TextDelta]
    assert policy.resumed == 1 and policy.closed


def test_a_reader_of_a_plain_stream_changes_nothing() -> None:
    async def provider() -> AsyncIterator[Event]:
        yield TextDelta(text="x")

    async def read() -> tuple[list[Event], list[Event], tuple[list[Event], Exception | None]]:
        reader = SpliceReader(provider())
        events = [event async for event in reader.source]
        done = Done(response=text("x"))
        shown = await reader.done(done)
        failure = await reader.failed(ValueError("boom"))
        await reader.aclose()
        return events, shown, failure

    events, shown, (said, error) = asyncio.run(read())
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["x"]
    assert len(shown) == 1 and isinstance(shown[0], Done)
    assert said == [] and isinstance(error, ValueError)
