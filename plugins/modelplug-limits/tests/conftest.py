"""Helpers for the limits plugin's tests: a fake wall clock whose sleep only advances
it, a policy on that clock with its own counters, and clients built with it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from modelplug import Client
from modelplug_kit import MemoryCounters
from modelplug_limits.policy import LimitsPolicy


class FakeClock:
    """Wall-clock seconds (a fixed day) and a sleep that only advances them."""

    def __init__(self) -> None:
        self.now = 1_764_590_400.0  # 2025-12-01T12:00:00Z
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class HTTPError(Exception):
    """What an SDK's status error looks like to core's generic classifier."""

    def __init__(self, status: int, retry_after: str | None = None) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status
        self.headers = {"retry-after": retry_after} if retry_after is not None else {}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def counters(clock: FakeClock) -> MemoryCounters:
    return MemoryCounters(clock=clock)


@pytest.fixture
def limits(clock: FakeClock, counters: MemoryCounters) -> Callable[..., LimitsPolicy]:
    def make(**options: Any) -> LimitsPolicy:
        return LimitsPolicy(options, store=counters, clock=clock, sleep=clock.sleep)

    return make


@pytest.fixture
def client_with(
    make_client: Callable[..., Client], limits: Callable[..., LimitsPolicy]
) -> Callable[..., Client]:
    """``client_with(*plugins, limits={...}, config=...)``: a Client with a fresh policy."""

    def make(*plugins: object, limits_options: dict[str, Any] | None = None, **kw: Any) -> Client:
        return make_client(limits(**(limits_options or {})), *plugins, **kw)

    return make


@pytest.fixture
def http_error() -> type[HTTPError]:
    return HTTPError
