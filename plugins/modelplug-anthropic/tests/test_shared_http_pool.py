"""The shared AsyncClient is sized by core's ``[http]`` table (``http_limits``), not a
hard-coded 100 connections, so hundreds of Claude streams can be open at once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx2
import pytest
from modelplug import Client
from modelplug_anthropic.http import HTTP


def limits_made_for(client: Client, monkeypatch: pytest.MonkeyPatch) -> Any:
    seen: dict[str, Any] = {}
    real = httpx2.AsyncClient

    def recording(**kwargs: Any) -> httpx2.AsyncClient:
        seen.update(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(httpx2, "AsyncClient", recording)

    async def make() -> None:
        HTTP.shared(client)
        await client.aclose()

    asyncio.run(make())
    return seen["limits"]


def test_shared_http_pool_defaults_to_a_thousand_connections(
    claude_client: Callable[..., Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert limits_made_for(claude_client(), monkeypatch).max_connections == 1000


def test_shared_http_pool_follows_the_http_table(
    claude_client: Callable[..., Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    client = claude_client("[http]\nmax_connections = 300\nmax_keepalive_connections = 50\n")
    limits = limits_made_for(client, monkeypatch)
    assert (limits.max_connections, limits.max_keepalive_connections) == (300, 50)
