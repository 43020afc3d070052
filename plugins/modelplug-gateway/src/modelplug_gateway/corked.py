"""uvicorn's HTTP protocol with its writes corked per turn of the event loop: what the app
sends in one turn (a stream's head and first frame, the frames of one upstream read, a
body and its end) leaves as one write to the socket, at the end of that turn, or as
soon as the answer is complete (its last bytes do not wait for the app's bookkeeping
after its last send).

uvicorn writes every ASGI message to the socket at once: a streamed answer of seven
frames is nine system calls, and each one wakes the caller's process to read a few
bytes. On a small machine shared with the caller (two cores), those wake-ups preempt
the gateway itself: they were most of its added latency. Nothing waits for more data
here: a write is only held until the app's task yields to the loop (to wait for the
upstream), which is microseconds later."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.auto import AutoHTTPProtocol

from .early_refusal import EarlyRefusal

__all__ = ["PROTOCOL", "CorkedHTTPProtocol", "CorkedTransport"]


class CorkedTransport:
    """A transport whose writes in one turn of the loop are joined and written once."""

    __slots__ = ("_loop", "_pending", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        pending = self._pending
        if pending is None:
            self._pending = [bytes(data)]
            self._loop.call_soon(self.flush)
        else:
            pending.append(bytes(data))

    def writelines(self, parts: Any) -> None:
        for part in parts:
            self.write(part)

    def flush(self) -> None:
        """Write what is held now (at the end of the turn, and before a close)."""
        pending = self._pending
        if pending is None:
            return
        self._pending = None
        transport = self._transport
        if not transport.is_closing():
            transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    def get_write_buffer_size(self) -> int:
        held = sum(len(part) for part in self._pending) if self._pending else 0
        return self._transport.get_write_buffer_size() + held

    def close(self) -> None:
        self.flush()  # an answer's last bytes, then the close (keep-alive off, drain)
        self._transport.close()

    def abort(self) -> None:
        self._pending = None
        self._transport.abort()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        # The rest of the transport's interface (extra info, reading, protocol) as is.
        return getattr(self._transport, name)


class CorkedHTTPProtocol(EarlyRefusal, AutoHTTPProtocol):  # type: ignore[misc,valid-type]
    """uvicorn's own HTTP protocol class (httptools when installed, else h11), on a
    :class:`CorkedTransport`, refusing a caller the app refuses on its headers alone
    before the request becomes a task (:mod:`modelplug_gateway.early_refusal`). Named to
    uvicorn as :data:`PROTOCOL` (a string, so that worker processes import it
    themselves)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        loop = asyncio.get_running_loop()
        super().connection_made(CorkedTransport(transport, loop))  # type: ignore[arg-type]
        self.find_refuser()

    def on_response_complete(self) -> None:
        # The answer's last bytes leave now: the app's bookkeeping after its last send
        # (metrics, the request log, closing the upstream stream) runs in the same turn,
        # and the caller should not wait for it.
        self.transport.flush()
        super().on_response_complete()


PROTOCOL = f"{__name__}:CorkedHTTPProtocol"
