"""Plain-http connections on asyncio's own transports, for the kit's HTTP path.

httpx2 sends through httpcore2 and h11: for each call a pool that plans its connections
by scanning every request, a state machine that checks each event, and anyio's scopes
on every read and write: three fifths to two thirds of a call's CPU time to a local
server (bench/plain_http.py). Plain http goes only to this machine or to a network the
user trusts (settings.py's rule), so that is where a call's own time matters most: this
module is an httpx2 transport that speaks HTTP/1.1 itself (the wire rules are
modelplug.http1's, h11's own) over asyncio's Protocol, with a pool of its own. TLS
connections keep httpx2's own transport (and its certificate handling).

What the kit's HTTP path relies on is kept: httpx2's exceptions (a connection closed
before any byte of an answer is httpcore's "Server disconnected without sending a
response", which the kit sends again once), a dead keep-alive connection seen as such
before it is used again, timeouts per connect, read, write and pool wait (the read
timeout looked up at each wait: the kit changes it once the head has come), the pool's
limits, a request's head and body in one write, and a connection closed at once when
its answer is dropped unfinished or its call is cancelled.
"""

from __future__ import annotations

import asyncio
import select
import socket
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import httpx2

from .http1 import (
    MAX_HEAD,
    Answer,
    BadAnswer,
    BadRequest,
    Chunked,
    Framing,
    framing,
    head_end,
    keeps_alive,
    parse_head,
    request_head,
)

__all__ = ["PlainHTTPTransport", "PlainResponse"]

# Bytes held for a reader that has not asked for them yet, before the socket is paused.
READ_HIGH_WATER = 256 * 1024
# The most a body read returns at once (a large answer's bytes go out as they come).
READ_SIZE = 64 * 1024
# httpcore's words for a connection closed before any byte of an answer (the kit
# resends such a request once: see provider_http.NO_ANSWER).
NO_ANSWER = "Server disconnected without sending a response."

Key = tuple[str, int]


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


class _Link:
    """One pooled connection: where it goes, its transport and protocol, and since when
    it has been idle."""

    __slots__ = ("conn", "idle_since", "key", "transport")

    def __init__(self, key: Key, transport: asyncio.Transport, conn: _Connection) -> None:
        self.key = key
        self.transport = transport
        self.conn = conn
        self.idle_since = 0.0

    async def more(self, timeout: float | None) -> None:
        """Wait until bytes or the end arrive (the buffer grows or ``conn.eof``)."""
        conn = self.conn
        if conn.read_paused and len(conn.buffer) < READ_HIGH_WATER // 2:
            conn.read_paused = False
            self.transport.resume_reading()
        conn.reading = waiter = asyncio.get_running_loop().create_future()
        try:
            await _within(waiter, timeout, httpx2.ReadTimeout)
        finally:
            conn.reading = None

    async def write(self, data: bytes, timeout: float | None) -> None:
        conn = self.conn
        if self.transport.is_closing():
            error = conn.error
            raise httpx2.WriteError(str(error) if error else "the connection is closed")
        self.transport.write(data)
        if conn.write_paused:
            conn.draining = waiter = asyncio.get_running_loop().create_future()
            try:
                await _within(waiter, timeout, httpx2.WriteTimeout)
            finally:
                conn.draining = None
            if conn.error is not None:
                raise httpx2.WriteError(str(conn.error))

    def take(self, size: int) -> bytes:
        """Up to ``size`` of the bytes that have arrived, removed from the buffer."""
        buffer = self.conn.buffer
        if len(buffer) <= size:
            data = bytes(buffer)
            buffer.clear()
        else:
            data = bytes(buffer[:size])
            del buffer[:size]
        return data

    def lost(self) -> httpx2.TransportError:
        """The error for a connection that ended before the answer did."""
        error = self.conn.error
        if error is not None:
            return httpx2.ReadError(str(error) or type(error).__name__)
        return httpx2.RemoteProtocolError("the server closed the connection mid-answer")

    def stale(self) -> bool:
        """Whether the server closed this idle connection, or sent something unasked:
        bytes or an end the loop has not delivered yet count too."""
        conn = self.conn
        if conn.buffer or conn.eof or self.transport.is_closing():
            return True
        sock = self.transport.get_extra_info("socket")
        if sock is None:
            return True
        try:
            readable, _, _ = select.select([sock.fileno()], [], [], 0)
        except (OSError, ValueError):
            return True  # a closed socket: not to be used again
        return bool(readable)

    def close(self) -> None:
        self.transport.abort()


async def _within(
    waiter: asyncio.Future[None], timeout: float | None, error: type[httpx2.TimeoutException]
) -> None:
    """Wait for ``waiter``, or raise ``error`` after ``timeout`` seconds. A timer that
    fails the future, rather than asyncio.timeout's cancel scope: it is the same wait for
    a fraction of the work (two or three waits a call)."""
    if timeout is None:
        await waiter
        return
    timer = asyncio.get_running_loop().call_later(timeout, _expire, waiter, error)
    try:
        await waiter
    finally:
        timer.cancel()


def _expire(waiter: asyncio.Future[None], error: type[httpx2.TimeoutException]) -> None:
    if not waiter.done():
        waiter.set_exception(error("timed out"))


class _Pool:
    """Connections by host and port: at most ``max_connections`` open, at most
    ``max_keepalive_connections`` of them idle, none idle longer than
    ``keepalive_expiry``; a request that finds none free waits its pool timeout."""

    def __init__(self, limits: httpx2.Limits) -> None:
        self.most = limits.max_connections
        self.most_idle = limits.max_keepalive_connections
        self.expiry = limits.keepalive_expiry
        self.idle: dict[Key, list[_Link]] = {}
        self.idle_count = 0
        self.open = 0
        self.waiting: deque[asyncio.Future[None]] = deque()
        self.closed = False

    async def acquire(self, key: Key, timeouts: Mapping[str, float | None]) -> _Link:
        while True:
            link = self._idle(key)
            if link is not None:
                return link
            if self.most is None or self.open < self.most or self._close_oldest_idle():
                return await self._connect(key, timeouts.get("connect"))
            waiter = asyncio.get_running_loop().create_future()
            self.waiting.append(waiter)
            try:
                await _within(waiter, timeouts.get("pool"), httpx2.PoolTimeout)
            except BaseException:
                if waiter in self.waiting:
                    self.waiting.remove(waiter)
                elif waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                    self._wake()  # woken, then cancelled: the free connection is another's
                raise

    def _idle(self, key: Key) -> _Link | None:
        links = self.idle.get(key)
        while links:
            link = links.pop()  # the most recently used: the likeliest to be alive
            self.idle_count -= 1
            expired = self.expiry is not None and time.monotonic() - link.idle_since > self.expiry
            if not expired and not link.stale():
                return link
            self._drop(link)
        return None

    def _close_oldest_idle(self) -> bool:
        """Make room for a connection elsewhere: close the longest idle one, if any."""
        links = [links for links in self.idle.values() if links]
        if not links:
            return False
        oldest = min(links, key=lambda found: found[0].idle_since)
        self.idle_count -= 1
        self._drop(oldest.pop(0))
        return True

    async def _connect(self, key: Key, timeout: float | None) -> _Link:
        self.open += 1
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, conn = await loop.create_connection(_Connection, key[0], key[1])
        except BaseException as exc:
            self.open -= 1
            self._wake()
            if isinstance(exc, TimeoutError):
                raise httpx2.ConnectTimeout("timed out connecting") from None
            if isinstance(exc, OSError):
                raise httpx2.ConnectError(str(exc)) from exc
            raise
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return _Link(key, transport, conn)

    def release(self, link: _Link, reuse: bool) -> None:
        """``link`` is free again: kept idle when ``reuse`` and there is room, else
        closed; either way a waiting request may go on."""
        most_idle = self.most_idle
        if reuse and not self.closed and (most_idle is None or self.idle_count < most_idle):
            link.idle_since = time.monotonic()
            self.idle.setdefault(link.key, []).append(link)
            self.idle_count += 1
        else:
            self._drop(link)
        self._wake()

    def _drop(self, link: _Link) -> None:
        link.close()
        self.open -= 1

    def _wake(self) -> None:
        while self.waiting:
            waiter = self.waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def close(self) -> None:
        self.closed = True
        for links in self.idle.values():
            for link in links:
                self._drop(link)
            links.clear()
        self.idle_count = 0


def _timeout(extensions: Mapping[str, Any], which: str) -> float | None:
    timeouts = extensions.get("timeout")
    return timeouts.get(which) if timeouts else None


class _Body(httpx2.AsyncByteStream):
    """An answer's body as its bytes arrive; its connection goes back to the pool once
    the body has all come, and is closed if the body is dropped before."""

    __slots__ = ("_extensions", "_framing", "_link", "_pool", "_reuse")

    def __init__(
        self,
        pool: _Pool,
        link: _Link,
        body: Framing,
        reuse: bool,
        extensions: Mapping[str, Any],
    ) -> None:
        self._pool = pool
        self._link: _Link | None = link
        self._framing = body
        self._reuse = reuse
        self._extensions = extensions

    async def __aiter__(self) -> AsyncIterator[bytes]:
        link = self._link
        if link is None:
            raise httpx2.StreamClosed()
        try:
            kind = self._framing.kind
            if kind == "length":
                parts = self._length(link, self._framing.length)
            elif kind == "chunked":
                parts = self._chunked(link)
            elif kind == "close":
                parts = self._until_close(link)
            else:
                parts = None
            if parts is not None:
                async for part in parts:
                    yield part
        except BadAnswer as exc:
            self._finish(reuse=False)
            raise httpx2.RemoteProtocolError(str(exc)) from None
        except BaseException:
            self._finish(reuse=False)
            raise
        # Bytes past the body's end were never asked for: the connection is not reused.
        self._finish(reuse=self._reuse and not link.conn.buffer)

    async def _length(self, link: _Link, length: int) -> AsyncIterator[bytes]:
        left = length
        while left:
            if not link.conn.buffer:
                if link.conn.eof:
                    error = link.lost()
                    raise type(error)(
                        f"{error}: received {length - left} of {length} bytes of the body"
                    )
                await link.more(_timeout(self._extensions, "read"))
                continue
            part = link.take(min(left, READ_SIZE))
            left -= len(part)
            yield part

    async def _chunked(self, link: _Link) -> AsyncIterator[bytes]:
        body = Chunked()
        buffer = link.conn.buffer
        while not body.done:
            part = body.take(buffer)
            if part:
                yield part
            elif not body.done:
                if link.conn.eof:
                    raise link.lost()
                await link.more(_timeout(self._extensions, "read"))

    async def _until_close(self, link: _Link) -> AsyncIterator[bytes]:
        conn = link.conn
        while True:
            if conn.buffer:
                yield link.take(READ_SIZE)
            elif conn.eof:
                if conn.error is not None:
                    raise link.lost()
                return
            else:
                await link.more(_timeout(self._extensions, "read"))

    def _finish(self, reuse: bool) -> None:
        link, self._link = self._link, None
        if link is not None:
            self._pool.release(link, reuse)

    async def aclose(self) -> None:
        self._finish(reuse=False)


def _head(url: httpx2.URL, method: bytes, headers: list[tuple[bytes, bytes]]) -> bytes:
    if url.raw_scheme != b"http":
        raise httpx2.UnsupportedProtocol(f"{url.scheme}:// is not sent over plain http")
    try:
        return request_head(method, url.raw_path, headers)
    except BadRequest as exc:
        raise httpx2.LocalProtocolError(str(exc)) from None


class PlainResponse:
    """An answer of :meth:`PlainHTTPTransport.exchange`: what the kit reads of an
    httpx2.Response (``status_code``, ``headers``, ``aiter_bytes``, ``aclose``) and
    nothing it does not (the headers are made into httpx2.Headers when asked for)."""

    __slots__ = ("_body", "_headers", "_raw", "status_code")

    def __init__(self, answer: Answer, body: _Body) -> None:
        self.status_code = answer.status
        self._raw = answer.headers
        self._headers: httpx2.Headers | None = None
        self._body = body

    @property
    def headers(self) -> httpx2.Headers:
        if self._headers is None:
            self._headers = httpx2.Headers(self._raw)
        return self._headers

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body's bytes as they come, decoded as httpx2 decodes them (an encoded
        body goes through an httpx2.Response for its decoders)."""
        for name, value in self._raw:
            if name.lower() == b"content-encoding" and value.strip().lower() != b"identity":
                response = httpx2.Response(self.status_code, headers=self._raw, stream=self._body)
                return response.aiter_bytes()
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[bytes]:
        parts = self._body.__aiter__()
        try:
            async for part in parts:
                if part:
                    yield part
        finally:
            # Closed with this one, not left for the loop to close at collection.
            await parts.aclose()  # type: ignore[attr-defined]

    async def aclose(self) -> None:
        await self._body.aclose()


class PlainHTTPTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport for ``http://`` URLs, pooled like httpx2's own (mount it for
    ``"http://"`` only, and only where no proxy is configured for http)."""

    def __init__(self, limits: httpx2.Limits) -> None:
        self._pool = _Pool(limits)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        method = request.method.encode("ascii")
        head = _head(url, method, request.headers.raw)

        async def send(link: _Link) -> None:
            await self._send(link, head, request)

        answer, body = await self._exchange(url, method, send, request.extensions)
        return httpx2.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=body,
            extensions={"http_version": answer.version, "reason_phrase": answer.reason},
        )

    async def exchange(
        self,
        method: str,
        url: httpx2.URL,
        headers: list[tuple[bytes, bytes]],
        content: bytes,
        extensions: Mapping[str, Any],
    ) -> PlainResponse:
        """One request with a body of bytes, sent with exactly ``headers`` (the caller's
        Host and Content-Length included), answered without an httpx2 Request or
        Response around it: on loopback those objects, their headers and the client's
        layers around them cost about as much as the exchange itself
        (bench/plain_http.py). The same pool, wire rules, timeouts (``extensions``'
        ``timeout``, read at each wait) and exceptions as :meth:`handle_async_request`.
        """
        method_bytes = method.encode("ascii")
        data = _head(url, method_bytes, headers) + content

        async def send(link: _Link) -> None:
            # Head and body in one write: the server wakes once to a whole request.
            await link.write(data, _timeout(extensions, "write"))

        answer, body = await self._exchange(url, method_bytes, send, extensions)
        return PlainResponse(answer, body)

    async def _exchange(
        self,
        url: httpx2.URL,
        method: bytes,
        send: Callable[[_Link], Awaitable[None]],
        extensions: Mapping[str, Any],
    ) -> tuple[Answer, _Body]:
        key = (url.raw_host.decode("ascii"), url.port or 80)
        link = await self._pool.acquire(key, extensions.get("timeout") or {})
        try:
            await send(link)
            answer, framing = await self._answer(link, method, extensions)
        except BaseException as exc:
            self._pool.release(link, reuse=False)
            if isinstance(exc, BadAnswer):
                raise httpx2.RemoteProtocolError(str(exc)) from None
            raise
        return answer, _Body(self._pool, link, framing, keeps_alive(answer, framing), extensions)

    async def _send(self, link: _Link, head: bytes, request: httpx2.Request) -> None:
        write_timeout = _timeout(request.extensions, "write")
        try:
            content = request.content
        except httpx2.RequestNotRead:
            content = None
        if content is not None:
            # Head and body in one write: the server wakes once to a whole request.
            await link.write(head + content if content else head, write_timeout)
            return
        chunked = any(
            name.lower() == b"transfer-encoding" and b"chunked" in value.lower()
            for name, value in request.headers.raw
        )
        await link.write(head, write_timeout)
        async for part in request.stream:  # type: ignore[union-attr]
            if part:
                framed = b"%x\r\n%b\r\n" % (len(part), part) if chunked else part
                await link.write(framed, write_timeout)
        if chunked:
            await link.write(b"0\r\n\r\n", write_timeout)

    async def _answer(
        self, link: _Link, method: bytes, extensions: Mapping[str, Any]
    ) -> tuple[Answer, Framing]:
        conn = link.conn
        looked = 0
        while True:  # informational (1xx) answers are read past
            end = head_end(conn.buffer, looked)
            while end < 0:
                if len(conn.buffer) > MAX_HEAD:
                    raise BadAnswer(f"the answer's head is longer than {MAX_HEAD} bytes")
                if conn.eof:
                    if conn.buffer:
                        raise httpx2.RemoteProtocolError(
                            "the server closed the connection mid-head"
                        )
                    if conn.error is not None:
                        raise link.lost()
                    raise httpx2.RemoteProtocolError(NO_ANSWER)
                looked = len(conn.buffer)
                await link.more(_timeout(extensions, "read"))
                end = head_end(conn.buffer, looked)
            raw = bytes(conn.buffer[:end])
            del conn.buffer[:end]
            looked = 0
            answer = parse_head(raw)
            if answer.status == 101:
                raise BadAnswer("the server switched protocols (101), which is not supported")
            if answer.status >= 200:
                return answer, framing(answer, method)

    async def aclose(self) -> None:
        self._pool.close()
