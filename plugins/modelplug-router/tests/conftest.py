"""Shared helpers for the router's tests: a fake clock, in-process deployments that
answer, fail, take time or hold their stream open, and clients with a RouterPolicy on
the fake clock, its own memory store and a seeded random source."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

import pytest
from modelplug import Client, hookimpl
from modelplug.contract.types import (
    Done,
    Endpoint,
    Event,
    Message,
    Price,
    Provider,
    Request,
    Response,
    Route,
    TextBlock,
    TextDelta,
    Usage,
)
from modelplug.testing import calm_hypothesis
from modelplug_kit import MemoryCounters
from modelplug_kit.testing import WireServer
from modelplug_router import RouterPolicy


class FakeClock:
    """A clock tests move by hand: nothing really waits."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class HTTPError(Exception):
    """What an SDK's status error looks like to core's generic classifier."""

    def __init__(self, status: int, message: str = "") -> None:
        super().__init__(message or f"HTTP {status}")
        self.status_code = status
        self.headers: dict[str, str] = {}


class Lab:
    """A deployment ``NAME/...`` in this process: each call may move the clock by
    ``latency`` before its first event, fail with ``error`` (before any output), or
    hold its stream open after the first text until ``release`` is set."""

    def __init__(
        self,
        name: str,
        *,
        clock: FakeClock | None = None,
        latency: float = 0.0,
        error: Exception | None = None,
        price: Price | None = None,
        usage: Usage | None = None,
        local: bool = True,
    ) -> None:
        self.provider = name
        self.local = local
        self.clock = clock
        self.latency = latency
        self.error = error
        self.price = price
        self.usage = usage or Usage(input=10, output=5)
        self.calls = 0
        self.open = 0  # streams opened and not yet ended
        self.release: asyncio.Event | None = None

    @hookimpl
    def modelplug_providers(self) -> list[Provider]:
        return [Provider(name=self.provider, type=self.provider)]

    @hookimpl
    def modelplug_resolve(self, spec: str) -> Route | None:
        provider, _, model = spec.partition("/")
        if provider != self.provider:
            return None
        route = Route(
            provider=provider, model=model, endpoint=Endpoint(type="lab", local=self.local)
        )
        if self.price is not None:
            route.info.price = self.price
        return route

    @hookimpl
    def modelplug_stream(
        self, route: Route, request: Request, client: Any
    ) -> AsyncIterator[Event] | None:
        if route.provider != self.provider:
            return None
        self.calls += 1
        return self.play(route)

    async def play(self, route: Route) -> AsyncIterator[Event]:
        self.open += 1
        try:
            if self.clock is not None:
                self.clock.now += self.latency
            if self.error is not None:
                raise self.error
            yield TextDelta(text=self.provider)
            if self.release is not None:
                await self.release.wait()
            message = Message(role="assistant", content=[TextBlock(text=self.provider)])
            yield Done(response=Response(message=message, model=route.name, usage=self.usage))
        finally:
            self.open -= 1


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(clock: FakeClock) -> MemoryCounters:
    return MemoryCounters(clock=clock)


@pytest.fixture
def router(clock: FakeClock, store: MemoryCounters) -> RouterPolicy:
    return RouterPolicy(store=store, clock=clock, random=random.Random(7))


@pytest.fixture
def client_with(make_client: Callable[..., Client], router: RouterPolicy) -> Callable[..., Client]:
    """``client_with(*labs, groups={...}, config={...})``: a Client with the router."""

    def make(
        *plugins: object,
        groups: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Client:
        settings = {**(config or {}), "groups": dict(groups or {})}
        return make_client(router, *plugins, config=settings, **kwargs)

    return make


@pytest.fixture
def servers() -> Iterator[tuple[WireServer, WireServer]]:
    """Two deployments' servers on loopback, ``east`` and ``west``."""
    east, west = WireServer().start(), WireServer().start()
    yield east, west
    east.stop()
    west.stop()


def two_servers(east: WireServer, west: WireServer, **group: Any) -> dict[str, Any]:
    """Settings: openai-compatible providers ``east`` and ``west`` on the two servers,
    the group ``g`` of ``east/m`` and ``west/m`` (and ``group``'s keys), rate limits
    cooling a deployment for 30 s."""
    return {
        "providers": {
            "east": {"type": "openai-compatible", "base_url": east.url + "/v1"},
            "west": {"type": "openai-compatible", "base_url": west.url + "/v1"},
        },
        "groups": {"g": {"deployments": ["east/m", "west/m"], **group}},
        "fallback": {"cooldown_rate_limit": 30},
    }


def labs(*names: str, **options: Any) -> list[Lab]:
    """One Lab per name, with the same options."""
    return [Lab(name, **options) for name in names]


@pytest.fixture
def kit() -> Any:
    """The helpers above, for test modules (conftest cannot be imported by name)."""
    from types import SimpleNamespace

    return SimpleNamespace(Lab=Lab, labs=labs, HTTPError=HTTPError, two_servers=two_servers)


calm_hypothesis()
