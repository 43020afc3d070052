"""Every plugin's shared httpx2 client is sized by core's ``[http]`` table
(``http_limits``), not httpx2's default of 100 connections: a pool of 100 makes the
101st concurrent stream wait in silence (bench/concurrency.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest

# (plugin, module, how that module's shared client is reached from a Client)
SHARED = [
    ("modelplug-anthropic", "modelplug_anthropic.sdk", lambda m, c: m.shared(c).http),
    ("modelplug-gemini", "modelplug_gemini.http", lambda m, c: m.HTTP.shared(c).http),
    ("modelplug-ollama", "modelplug_ollama.http", lambda m, c: m.HTTP.shared(c).http),
    ("modelplug-openai", "modelplug_openai.http", lambda m, c: m.HTTP.shared(c).http),
    ("modelplug-openai-compat", "modelplug_openai_compat.http", lambda m, c: m.HTTP.shared(c).http),
]


def limits_of_shared_client(
    plugin: str, module: str, reach: Any, config: dict[str, Any], make_client: Any, monkeypatch: Any
) -> Any:
    """The ``limits`` the plugin's shared AsyncClient was built with."""
    found = pytest.importorskip(module)
    client = make_client(plugin, config=config)
    seen: dict[str, Any] = {}
    real = httpx2.AsyncClient

    def recording(**kwargs: Any) -> httpx2.AsyncClient:
        seen.update(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(httpx2, "AsyncClient", recording)

    async def make() -> None:
        reach(found, client)
        await client.aclose()

    asyncio.run(make())
    return seen["limits"]


@pytest.mark.parametrize(("plugin", "module", "reach"), SHARED, ids=[s[0] for s in SHARED])
def test_shared_http_pool_defaults_to_a_thousand_connections(
    plugin: str, module: str, reach: Any, make_client: Any, monkeypatch: Any
) -> None:
    limits = limits_of_shared_client(plugin, module, reach, {}, make_client, monkeypatch)
    assert limits.max_connections == 1000


@pytest.mark.parametrize(("plugin", "module", "reach"), SHARED, ids=[s[0] for s in SHARED])
def test_shared_http_pool_follows_the_http_table(
    plugin: str, module: str, reach: Any, make_client: Any, monkeypatch: Any
) -> None:
    config = {"http": {"max_connections": 300, "max_keepalive_connections": 50}}
    limits = limits_of_shared_client(plugin, module, reach, config, make_client, monkeypatch)
    assert (limits.max_connections, limits.max_keepalive_connections) == (300, 50)
