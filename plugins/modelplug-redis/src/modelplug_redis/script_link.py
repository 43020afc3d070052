"""The scripts' own connection to a ``redis://`` server: one socket per event loop, every
script call written at once and its reply matched in order (pipelined), no pool.

A reservation is the one Redis round trip of a gateway call, and through redis-py's
asyncio client it cost some 250-300 us of this process's CPU on the 2-core machine (a
connection taken from the pool and given back, the command packed argument by argument,
the retry wrapper, the reply parsed): measured in-process against the same call with the
round trip answered locally, 790-813 against 506-564 us for the whole gateway call. Here
the call is one write of bytes packed at once and one future resolved by the protocol.

Only Lua scripts go this way (the counters' reserve and settle, the cooldowns' mark),
through :meth:`Connection.script`, and only for ``redis://``: ``rediss://`` (TLS) and
``unix://`` keep redis-py, as does every other command. What happens when Redis is down
or slow is the Connection's, the same for both paths: a connection that fails or closes
fails every call waiting on it with ConnectionError, and the next call connects anew.
Each round trip (the connect, the login, each reply) waits the ``[redis] timeout`` at
most, as redis-py's socket timeouts bound its reads: a server that stops answering costs
a script one timeout, not the Connection's bound on the whole (four).
"""

from __future__ import annotations

import asyncio
import hashlib
import socket
from collections import deque
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

from .resp import ProtocolError, Replies, ReplyError, pack

__all__ = ["ScriptLink", "Scripts", "open_link"]


class ScriptLink(asyncio.Protocol):
    """One pipelined connection: :meth:`call` writes a command and returns the future
    of its reply."""

    def __init__(self) -> None:
        self._pending: deque[asyncio.Future[Any]] = deque()
        self._replies = Replies()
        self._transport: asyncio.Transport | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        try:
            replies = self._replies.feed(data)
        except ProtocolError as exc:
            self._fail(ConnectionError(f"Redis sent bytes that are not RESP: {exc}"))
            return
        pending = self._pending
        for reply in replies:
            if not pending:
                self._fail(ConnectionError("Redis sent a reply nobody asked for"))
                return
            waiter = pending.popleft()
            if waiter.done():  # its caller gave up (a timeout): the reply is dropped
                continue
            if isinstance(reply, ReplyError):
                waiter.set_exception(reply)
            else:
                waiter.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(ConnectionError("the connection to Redis closed"))

    def _fail(self, error: Exception) -> None:
        self.closed = True
        while self._pending:
            waiter = self._pending.popleft()
            if not waiter.done():
                waiter.set_exception(error)
        if self._transport is not None:
            self._transport.abort()

    def call(self, *args: str | bytes | int | float) -> asyncio.Future[Any]:
        """Write one command; its reply (or ReplyError, or ConnectionError) is the
        future's."""
        if self.closed or self._transport is None:
            raise ConnectionError("the connection to Redis is closed")
        waiter = asyncio.get_running_loop().create_future()
        self._pending.append(waiter)
        self._transport.write(pack(args))
        return waiter

    def close(self) -> None:
        self.closed = True
        if self._transport is not None:
            self._transport.close()


async def open_link(url: str, timeout: float | None = None) -> ScriptLink:
    """A connected link to ``url`` (``redis://[user:password@]host[:port][/db]``),
    logged in and on its database; ``timeout``: seconds each step may take (None: no
    bound)."""
    parts = urlsplit(url)
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(timeout):
        _, link = await loop.create_connection(
            ScriptLink, parts.hostname or "127.0.0.1", parts.port or 6379
        )
    try:
        if parts.password is not None:
            login = [unquote(parts.password)]
            if parts.username:
                login.insert(0, unquote(parts.username))
            await _reply(link.call("AUTH", *login), timeout)
        db = parts.path.strip("/")
        if db and db != "0":
            await _reply(link.call("SELECT", db), timeout)
    except BaseException:
        link.close()
        raise
    return link


async def _reply(waiter: asyncio.Future[Any], timeout: float | None) -> Any:
    # A reply given up on leaves its future cancelled: the link drops it when it comes.
    async with asyncio.timeout(timeout):
        return await waiter


class Scripts:
    """The scripts of one Redis on one event loop: the link (connected on first use and
    again after it closed) and EVALSHA, loading a script the server does not have.

    :param timeout: seconds each round trip may take (``[redis] timeout``; None: no
        bound but the caller's).
    """

    def __init__(self, url: str, timeout: float | None = None) -> None:
        self.url = url
        self.timeout = timeout
        self._link: ScriptLink | None = None
        self._connecting: asyncio.Task[ScriptLink] | None = None

    async def link(self) -> ScriptLink:
        link = self._link
        if link is not None and not link.closed:
            return link
        connecting = self._connecting
        if connecting is None or _failed_or_closed(connecting):
            # One connect for every call that finds the link missing at once; shielded,
            # so a caller that gives up leaves it to the next (its link is not lost).
            connecting = self._connecting = asyncio.get_running_loop().create_task(
                open_link(self.url, self.timeout)
            )
        async with asyncio.timeout(self.timeout):
            self._link = await asyncio.shield(connecting)
        return self._link

    async def run(
        self, script: str, keys: Sequence[str], args: Sequence[str | bytes | int | float]
    ) -> Any:
        """The script's reply (EVALSHA; on NOSCRIPT the script is loaded and run again)."""
        sha = _sha(script)
        link = await self.link()
        try:
            return await _reply(link.call("EVALSHA", sha, len(keys), *keys, *args), self.timeout)
        except ReplyError as exc:
            if exc.code != "NOSCRIPT":
                raise
        await _reply(link.call("SCRIPT", "LOAD", script), self.timeout)
        return await _reply(link.call("EVALSHA", sha, len(keys), *keys, *args), self.timeout)

    async def aclose(self) -> None:
        """Close the link (the Client closes what plugins opened on its loop)."""
        if self._connecting is not None and not self._connecting.done():
            self._connecting.cancel()
        if self._link is not None:
            self._link.close()
            self._link = None


def _failed_or_closed(connecting: asyncio.Task[ScriptLink]) -> bool:
    if not connecting.done():
        return False
    if connecting.cancelled() or connecting.exception() is not None:
        return True
    return connecting.result().closed


_SHAS: dict[str, str] = {}


def _sha(script: str) -> str:
    sha = _SHAS.get(script)
    if sha is None:
        sha = _SHAS[script] = hashlib.sha1(script.encode(), usedforsecurity=False).hexdigest()
    return sha
