"""The shared AsyncClient is sized by core's ``[http]`` table (modelplug.host.http_options), not
httpx2's default 100 connections, so hundreds of streams can be open at once."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
from modelplug_openai_compat import http


def made_with(client: Any, monkeypatch: Any) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    real = httpx2.AsyncClient

    def recording(**kwargs: Any) -> httpx2.AsyncClient:
        seen.update(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(httpx2, "AsyncClient", recording)

    async def make() -> None:
        http.HTTP.shared(client)
        await client.aclose()

    asyncio.run(make())
    return seen


def test_shared_http_pool_defaults_to_a_thousand_connections(compat, monkeypatch):
    limits = made_with(compat(), monkeypatch)["limits"]
    assert limits.max_connections == 1000


def test_shared_http_pool_follows_the_http_table(compat, monkeypatch):
    limits = made_with(compat({"http": {"max_connections": 300}}), monkeypatch)["limits"]
    assert limits.max_connections == 300
