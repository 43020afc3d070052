"""Plain-http connections on asyncio's own transports, for the kit's HTTP path.

httpx2 sends through httpcore2, whose default network layer is anyio: every write and
read there costs a cancel scope, a timeout scope and a checkpoint (a turn of the event
loop after each write), about a tenth of a call's CPU time to a local server. Plain
http goes only to this machine or to a network the user trusts (settings.py's rule),
so that is where a call's own time matters most: this module gives those connections
an httpcore2 network backend written on asyncio's Protocol, and an httpx2 transport
over it. TLS connections keep httpx2's own transport (and its certificate handling).

A request's head and body (which h11 writes apart) leave in one write when its answer
is first read, so the server wakes once to a whole request.

What the kit's HTTP path relies on is kept: httpcore2's exceptions (mapped to httpx2's
by the transport as httpx2's own transport does), a dead keep-alive connection seen as
readable before it is used again, timeouts per read and write, and closing at once.
"""

from __future__ import annotations

import asyncio
import select
import socket
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

import httpcore2
import httpx2

if TYPE_CHECKING:
    import ssl

__all__ = ["PlainHTTPTransport"]

# Bytes held for a reader that has not asked for them yet, before the socket is paused.
READ_HIGH_WATER = 256 * 1024
# A request up to this size is written whole when its answer is first read; a larger one
# is written as it comes, waiting for the socket to drain (write_timeout applies).
HOLD_BYTES = 64 * 1024


class _Connection(asyncio.Protocol):
    """One socket's bytes as they arrive, and whoever waits for them or for a drain."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self.reading: asyncio.Future[None] | None = None
        self.draining: asyncio.Future[None] | None = None
        self.write_paused = False
        self.read_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > READ_HIGH_WATER and self.transport is not None:
            self.transport.pause_reading()
            self.read_paused = True
        self._wake_reader()

    def eof_received(self) -> bool | None:
        self.eof = True
        self._wake_reader()
        return None  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake_reader()
        self._wake_writer()

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        self._wake_writer()

    def _wake_reader(self) -> None:
        waiter = self.reading
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _wake_writer(self) -> None:
        waiter = self.draining
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class _Stream(httpcore2.AsyncNetworkStream):
    __slots__ = ("_conn", "_held", "_transport")

    def __init__(self, transport: asyncio.Transport, conn: _Connection) -> None:
        self._transport = transport
        self._conn = conn
        # A request's parts (h11 writes its head and its body apart), held until the
        # answer is read: one write, so the server wakes once to a whole request.
        self._held: list[bytes] = []

    def _release(self) -> None:
        held = self._held
        if held:
            data = held[0] if len(held) == 1 else b"".join(held)
            held.clear()
            # A server that closed meanwhile: the read that follows sees the end (httpcore2
            # then says it never answered, and the kit sends again once).
            if not self._transport.is_closing():
                self._transport.write(data)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        conn = self._conn
        if self._held:
            self._release()
        if not conn.buffer and not conn.eof:
            conn.reading = waiter = asyncio.get_running_loop().create_future()
            try:
                await _within(waiter, timeout, httpcore2.ReadTimeout)
            finally:
                conn.reading = None
        buffer = conn.buffer
        if buffer:
            if len(buffer) <= max_bytes:
                data = bytes(buffer)
                buffer.clear()
            else:
                data = bytes(buffer[:max_bytes])
                del buffer[:max_bytes]
            if conn.read_paused and len(buffer) < READ_HIGH_WATER // 2:
                conn.read_paused = False
                self._transport.resume_reading()
            return data
        if conn.error is not None:
            raise httpcore2.ReadError(str(conn.error) or type(conn.error).__name__)
        return b""  # the server closed its side: httpcore2 reads that as the end

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        conn = self._conn
        if self._transport.is_closing():
            error = conn.error
            raise httpcore2.WriteError(str(error) if error else "the connection is closed")
        held = self._held
        if len(buffer) + sum(len(part) for part in held) <= HOLD_BYTES:
            held.append(bytes(buffer))  # written by the read that follows (httpcore reads next)
            return
        held.append(buffer)
        self._release()
        if conn.write_paused:
            conn.draining = waiter = asyncio.get_running_loop().create_future()
            try:
                await _within(waiter, timeout, httpcore2.WriteTimeout)
            finally:
                conn.draining = None
            if conn.error is not None:
                raise httpcore2.WriteError(str(conn.error))

    async def aclose(self) -> None:
        self._transport.abort()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        # Never asked: only http:// URLs come here (no proxy, see PlainHTTPTransport).
        raise httpcore2.ConnectError("TLS is not served over a plain-http connection")

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # Bytes or an end the loop has not delivered yet count too: a keep-alive
            # connection the server closed must be seen as such before it is reused.
            conn = self._conn
            return bool(conn.buffer) or conn.eof or _readable(self._transport)
        if info == "socket":
            return self._transport.get_extra_info("socket")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        return None


async def _within(
    waiter: asyncio.Future[None], timeout: float | None, error: type[Exception]
) -> None:
    """Wait for ``waiter``, or raise ``error`` after ``timeout`` seconds. A timer that
    fails the future, rather than asyncio.timeout's cancel scope: it is the same wait
    for a fraction of the work (two or three waits a call)."""
    if timeout is None:
        await waiter
        return
    timer = asyncio.get_running_loop().call_later(timeout, _expire, waiter, error)
    try:
        await waiter
    finally:
        timer.cancel()


def _expire(waiter: asyncio.Future[None], error: type[Exception]) -> None:
    if not waiter.done():
        waiter.set_exception(error("timed out"))


def _readable(transport: asyncio.Transport) -> bool:
    sock = transport.get_extra_info("socket")
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock.fileno()], [], [], 0)
    except (OSError, ValueError):
        return True  # a closed socket: not to be used again
    return bool(readable)


class _Backend(httpcore2.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, conn = await loop.create_connection(
                    _Connection,
                    host,
                    port,
                    local_addr=(local_address, 0) if local_address else None,
                )
        except TimeoutError:
            raise httpcore2.ConnectTimeout("timed out") from None
        except OSError as exc:
            raise httpcore2.ConnectError(str(exc)) from exc
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for option in socket_options or ():
                sock.setsockopt(*option)
        return _Stream(transport, conn)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


# httpcore2's exceptions as httpx2 raises them, most specific first (httpx2's own
# transport maps them the same way, in a module of its own that is not public).
_MAPPED: tuple[tuple[type[Exception], type[httpx2.TransportError]], ...] = (
    (httpcore2.ConnectTimeout, httpx2.ConnectTimeout),
    (httpcore2.ReadTimeout, httpx2.ReadTimeout),
    (httpcore2.WriteTimeout, httpx2.WriteTimeout),
    (httpcore2.PoolTimeout, httpx2.PoolTimeout),
    (httpcore2.TimeoutException, httpx2.TimeoutException),
    (httpcore2.ConnectError, httpx2.ConnectError),
    (httpcore2.ReadError, httpx2.ReadError),
    (httpcore2.WriteError, httpx2.WriteError),
    (httpcore2.NetworkError, httpx2.NetworkError),
    (httpcore2.ProxyError, httpx2.ProxyError),
    (httpcore2.UnsupportedProtocol, httpx2.UnsupportedProtocol),
    (httpcore2.LocalProtocolError, httpx2.LocalProtocolError),
    (httpcore2.RemoteProtocolError, httpx2.RemoteProtocolError),
    (httpcore2.ProtocolError, httpx2.ProtocolError),
)


def _mapped(exc: Exception) -> Exception:
    """httpx2's exception for httpcore2's ``exc`` (any other as it is). A function
    called in an ``except``, not a context manager: that costs a generator a call."""
    for raw, mapped in _MAPPED:
        if isinstance(exc, raw):
            return mapped(str(exc))
    return exc


class _Body(httpx2.AsyncByteStream):
    __slots__ = ("_stream",)

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._stream:
                yield part
        except Exception as exc:
            mapped = _mapped(exc)
            if mapped is exc:
                raise
            raise mapped from exc

    async def aclose(self) -> None:
        await self._stream.aclose()


class PlainHTTPTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport for ``http://`` URLs, pooled like httpx2's own (mount it for
    ``"http://"`` only, and only where no proxy is configured for http)."""

    def __init__(self, limits: httpx2.Limits) -> None:
        self._pool = httpcore2.AsyncConnectionPool(
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_Backend(),
        )

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        raw = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            answer = await self._pool.handle_async_request(raw)
        except Exception as exc:
            mapped = _mapped(exc)
            if mapped is exc:
                raise
            raise mapped from exc
        return httpx2.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_Body(answer.stream),
            extensions=answer.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()
