"""Shared helpers for the fallback plugin's tests: scripted errors, a fake clock, a
provider that fails after output, and clients built with the policy."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

import pytest
from modelplug import Client, hookimpl
from modelplug.contract.types import (
    Done,
    Endpoint,
    Event,
    Message,
    Provider,
    Request,
    Response,
    Route,
    TextBlock,
    TextDelta,
    Usage,
)
from modelplug.testing import FakeModel, calm_hypothesis
from modelplug_fallback.cooldowns import SHARED
from modelplug_fallback.policy import FallbackPolicy
from modelplug_kit import MemoryCooldowns


class HTTPError(Exception):
    """What an SDK's status error looks like to core's generic classifier."""

    def __init__(self, status: int, message: str = "", retry_after: str | None = None) -> None:
        super().__init__(message or f"HTTP {status}")
        self.status_code = status
        self.headers = {"retry-after": retry_after} if retry_after is not None else {}


def rate_limited(retry_after: str | None = None) -> HTTPError:
    return HTTPError(429, "Too Many Requests", retry_after)


def unavailable() -> HTTPError:
    return HTTPError(503, "Service Unavailable")


def context_overflow() -> HTTPError:
    return HTTPError(400, "prompt is too long: 250000 tokens > 200000 maximum")


class FakeClock:
    """A clock and a sleep that only advances it: tests never really wait."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class NamedProvider:
    """A provider of one name, as every test provider here is: it answers
    ``<provider>/<model>`` specs and opens streams for its own routes only, by
    :meth:`play`."""

    provider: str

    def endpoint(self) -> Endpoint:
        return Endpoint(type="test", local=True)

    @hookimpl
    def modelplug_resolve(self, spec: str) -> Route | None:
        provider, _, model = spec.partition("/")
        if provider != self.provider:
            return None
        return Route(provider=provider, model=model, endpoint=self.endpoint())

    @hookimpl
    def modelplug_providers(self) -> list[Provider]:
        return [Provider(name=self.provider, type=self.provider)]

    @hookimpl
    def modelplug_stream(
        self, route: Route, request: Request, client: Client
    ) -> AsyncIterator[Event] | None:
        if route.provider != self.provider:
            return None
        return self.play(route, request, client)

    def play(self, route: Route, request: Request, client: Client) -> AsyncIterator[Event]:
        raise NotImplementedError


class TalkThenFail(NamedProvider):
    """A provider (``talker/...``) that yields some text and then raises ``error``:
    the failure-after-output case FakeModel cannot play."""

    def __init__(self, words: list[str], error: Exception, provider: str = "talker") -> None:
        self.words = words
        self.error = error
        self.provider = provider
        self.calls = 0

    async def play(self, route: Route, request: Request, client: Client) -> AsyncIterator[Event]:
        self.calls += 1
        for word in self.words:
            yield TextDelta(text=word)
        raise self.error


class Scripted(NamedProvider):
    """A provider (``scripted/...``) that plays one list of events per call and then
    raises that call's error, or ends with a Done when it has none."""

    provider = "scripted"

    def __init__(self, *calls: tuple[list[Event], Exception | None]) -> None:
        self.calls = list(calls)
        self.opened = 0

    def play(self, route: Route, request: Request, client: Client) -> AsyncIterator[Event]:
        # Counted when the stream is opened, not when it is read.
        events, error = self.calls.pop(0)
        self.opened += 1
        return self._events(route, events, error)

    async def _events(
        self, route: Route, events: list[Event], error: Exception | None
    ) -> AsyncIterator[Event]:
        for event in events:
            yield event
        if error is not None:
            raise error
        message = Message(role="assistant", content=[TextBlock(text="scripted")])
        yield Done(response=Response(message=message, model=route.name))


class KeyedProvider(NamedProvider):
    """A provider (``keyed/...``) whose endpoint needs KEYED_API_KEY."""

    provider = "keyed"

    def __init__(self) -> None:
        self.calls = 0

    def endpoint(self) -> Endpoint:
        return Endpoint(type="test", base_url="https://keyed.test", api_key_env="KEYED_API_KEY")

    async def play(self, route: Route, request: Request, client: Client) -> AsyncIterator[Event]:
        self.calls += 1
        client.settings.api_key(route.endpoint.api_key_env, route.provider)
        message = Message(role="assistant", content=[TextBlock(text="keyed")])
        yield Done(response=Response(message=message, model=route.name, usage=Usage(input=1)))


@pytest.fixture(autouse=True)
def _fresh_shared_cooldowns() -> Iterator[None]:
    SHARED.reset()
    yield
    SHARED.reset()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(clock: FakeClock) -> MemoryCooldowns:
    return MemoryCooldowns(clock=clock)


@pytest.fixture
def policy(clock: FakeClock, store: MemoryCooldowns) -> Callable[..., FallbackPolicy]:
    """``policy(retries=1, ...)``: a FallbackPolicy on the fake clock and its own store."""

    def make(**options: Any) -> FallbackPolicy:
        return FallbackPolicy(
            options, store=store, clock=clock, sleep=clock.sleep, random=lambda: 0.5
        )

    return make


@pytest.fixture
def client_with(
    make_client: Callable[..., Client], policy: Callable[..., FallbackPolicy]
) -> Callable[..., Client]:
    """``client_with(*plugins, config=..., options=...)``: a Client with a fresh policy."""

    def make(
        *plugins: object,
        config: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Client:
        return make_client(policy(**(options or {})), *plugins, config=config, **kwargs)

    return make


def two_models(first: list[Any], second: list[Any]) -> tuple[FakeModel, FakeModel]:
    """Two fake providers, ``a/...`` and ``b/...``, with their scripts."""
    return FakeModel(first, provider="a"), FakeModel(second, provider="b")


@pytest.fixture
def kit() -> Any:
    """The helpers above, for test modules (conftest cannot be imported by name)."""
    from types import SimpleNamespace

    return SimpleNamespace(
        HTTPError=HTTPError,
        rate_limited=rate_limited,
        unavailable=unavailable,
        context_overflow=context_overflow,
        TalkThenFail=TalkThenFail,
        Scripted=Scripted,
        KeyedProvider=KeyedProvider,
        two_models=two_models,
    )


# No timing checks in property tests: a busy machine must not fail them by chance.
calm_hypothesis()
