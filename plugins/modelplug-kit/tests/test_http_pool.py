"""The [http] table sizes the shared HTTP pools, and a stream opened at the limit starts
with a Notice instead of waiting for a connection in silence."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import AsyncIterator
from typing import Any

import pytest
from modelplug import hookimpl
from modelplug.contract.errors import ConfigError
from modelplug.contract.types import (
    Done,
    Event,
    Message,
    Notice,
    Request,
    Response,
    Route,
    TextDelta,
)
from modelplug.host.http_options import HTTPOptions, http_options
from modelplug_kit import http_limits


class HeldOpen:
    """A provider whose streams stay open until ``release`` is set."""

    name = "held-open"

    def __init__(self) -> None:
        self.release = asyncio.Event()

    @hookimpl
    def modelplug_resolve(
        self, spec: str, settings: Any, provider_type: str | None
    ) -> Route | None:
        return Route(provider="held", model="m") if spec.startswith("held/") else None

    @hookimpl
    def modelplug_stream(self, route: Route, request: Request) -> AsyncIterator[Event]:
        return self._play()

    async def _play(self) -> AsyncIterator[Event]:
        yield TextDelta(text="a")
        await self.release.wait()
        yield Done(response=Response(message=Message(role="assistant", content="a")))


def test_http_limits_default_lets_a_thousand_streams_run(make_client: Any) -> None:
    limits = http_limits(make_client().settings)
    assert (limits.max_connections, limits.max_keepalive_connections) == (1000, 100)
    assert http_options(make_client().settings) == HTTPOptions()


def test_http_limits_read_the_http_table(make_client: Any) -> None:
    client = make_client(
        config={
            "http": {"max_connections": 8, "max_keepalive_connections": 20, "keepalive_expiry": 1}
        }
    )
    limits = http_limits(client.settings)
    # Never more idle connections kept than may be open.
    assert (limits.max_connections, limits.max_keepalive_connections) == (8, 8)
    assert limits.keepalive_expiry == 1.0


def test_http_table_is_no_unknown_section(make_client: Any) -> None:
    # A misspelt table beside it shows the warning that [http] must not get.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        client = make_client(
            config={"http": {"max_connections": 8}, "htpp": {"max_connections": 8}}
        )
    unknown = [str(w.message) for w in caught if "unknown settings section" in str(w.message)]
    assert len(unknown) == 1 and "[htpp]" in unknown[0], unknown
    assert http_limits(client.settings).max_connections == 8


@pytest.mark.parametrize("value", [0, -1, "many", True])
def test_http_max_connections_must_be_a_positive_number(make_client: Any, value: object) -> None:
    client = make_client(config={"http": {"max_connections": value}})
    with pytest.raises(ConfigError, match=r"\[http\] max_connections"):
        http_limits(client.settings)


def test_stream_at_the_pool_limit_starts_with_a_notice(make_client: Any) -> None:
    provider = HeldOpen()
    client = make_client(provider, config={"http": {"max_connections": 2}})

    async def first_event() -> Event:
        stream = client.astream("held/m", "hi")
        event = await anext(stream)
        tasks.append(asyncio.ensure_future(_drain(stream)))
        return event

    async def _drain(stream: AsyncIterator[Event]) -> list[Event]:
        return [event async for event in stream]

    tasks: list[asyncio.Future[list[Event]]] = []

    async def scenario() -> tuple[list[Event], Event]:
        below = [await first_event() for _ in range(2)]
        at_limit = await first_event()
        provider.release.set()
        await asyncio.gather(*tasks)
        return below, at_limit

    below, at_limit = asyncio.run(scenario())
    assert [type(e) for e in below] == [TextDelta, TextDelta]
    assert isinstance(at_limit, Notice) and at_limit.kind == "http_pool_full"
    assert "[http] max_connections" in at_limit.message
    assert at_limit.details == {"open_streams": 2, "max_connections": 2}


def test_stream_count_falls_when_streams_end(make_client: Any) -> None:
    provider = HeldOpen()
    provider.release.set()
    client = make_client(provider, config={"http": {"max_connections": 1}})

    async def run() -> list[list[str]]:
        kinds = []
        for _ in range(3):  # one after another: never two open at once
            kinds.append([type(e).__name__ async for e in client.astream("held/m", "hi")])
        return kinds

    assert asyncio.run(run()) == [["TextDelta", "Done"]] * 3
