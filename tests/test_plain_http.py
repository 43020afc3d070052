"""Plain-http connections on asyncio's own transports (modelplug.plain_http): pooled
and reused, a keep-alive connection the server closed is not reused, failures are
httpx2's exceptions, and a proxy configured for http keeps httpx2's own transport.
The wire itself (framing, limits, cancelling) is tests/test_plain_http_wire.py's."""

from __future__ import annotations

import asyncio

import httpx2
import pytest
from modelplug.plain_http import PlainHTTPTransport
from modelplug.provider_http import _plain_http_mounts

ANSWER = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n\r\nhello"


async def _server(close_after_answer: bool) -> tuple[asyncio.Server, int, list[int]]:
    """A loopback HTTP/1.1 server; the list counts the connections it accepted."""
    connections: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            while True:
                await reader.readuntil(b"\r\n\r\n")
                writer.write(ANSWER)
                await writer.drain()
                if close_after_answer:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], connections


def _client() -> httpx2.AsyncClient:
    limits = httpx2.Limits(max_connections=4, max_keepalive_connections=4)
    return httpx2.AsyncClient(mounts={"http://": PlainHTTPTransport(limits)}, timeout=5)


def test_calls_reuse_one_pooled_connection() -> None:
    async def run() -> tuple[list[bytes], int]:
        server, port, connections = await _server(close_after_answer=False)
        async with server, _client() as client:
            bodies = [(await client.get(f"http://127.0.0.1:{port}/")).content for _ in range(5)]
        return bodies, len(connections)

    bodies, connections = asyncio.run(run())
    assert bodies == [b"hello"] * 5
    assert connections == 1


def test_a_connection_the_server_closed_is_not_used_again() -> None:
    async def run() -> tuple[list[bytes], int]:
        server, port, connections = await _server(close_after_answer=True)
        async with server, _client() as client:
            bodies = []
            for _ in range(3):
                bodies.append((await client.get(f"http://127.0.0.1:{port}/")).content)
                await asyncio.sleep(0.05)  # the close reaches this side
        return bodies, len(connections)

    bodies, connections = asyncio.run(run())
    assert bodies == [b"hello"] * 3
    assert connections == 3


def test_a_refused_connection_is_httpx2s_connect_error() -> None:
    async def run() -> None:
        server, port, _ = await _server(close_after_answer=False)
        server.close()
        await server.wait_closed()
        async with _client() as client:
            await client.get(f"http://127.0.0.1:{port}/")

    with pytest.raises(httpx2.ConnectError):
        asyncio.run(run())


def test_a_read_timeout_is_httpx2s_read_timeout() -> None:
    async def run() -> None:
        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await asyncio.sleep(5)

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server, _client() as client:
            await client.get(f"http://127.0.0.1:{port}/", timeout=httpx2.Timeout(5, read=0.2))

    with pytest.raises(httpx2.ReadTimeout):
        asyncio.run(run())


def test_a_proxy_for_http_keeps_httpx2s_own_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    limits = httpx2.Limits()
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    mounts = _plain_http_mounts(limits)
    assert mounts is not None and isinstance(mounts["http://"], PlainHTTPTransport)
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    assert _plain_http_mounts(limits) is None
