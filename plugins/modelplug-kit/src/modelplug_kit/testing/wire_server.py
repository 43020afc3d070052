"""A real HTTP/1.1 server on 127.0.0.1 that plays back recorded response bytes.

Tests of adapters use it so that what they exercise is a real socket: chunk boundaries
arrive as they were queued, a delay is a real wait, and a dropped connection is a real
reset mid-body. Every request is recorded (method, path, headers, body, and the
connection it came on), every connection accepted is counted (``connections``), and
the connections the client closed are noted (``closed_by_client``): like a real server,
it notices a client that went away even while it waits out a delay or a stall, and
stops answering it. ``wait_idle()`` waits until no request is on its way or being
answered, so a server shared by several tests can be handed on without a request an
earlier test left in flight taking an answer queued for the next.

    server = WireServer().start()
    server.add_sse(["{\\"choices\\": []}"], done=True)
    ... point the adapter at server.url ...
    assert server.requests[0].json()["stream"] is True
"""

from __future__ import annotations

import json
import select
import selectors
import socket
import socketserver
import struct
import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["RecordedRequest", "WireResponse", "WireServer", "refused_url", "split_every"]

Chunk = bytes | tuple[float, bytes]
# How often a wait (a delay, a stall) looks whether the client has gone.
POLL_SECONDS = 0.02


@dataclass
class WireResponse:
    """One queued response.

    :param status: HTTP status.
    :param headers: response headers (Content-Type defaults to text/event-stream).
    :param chunks: body pieces, each sent as its own write and HTTP chunk; a
        ``(delay, bytes)`` pair waits ``delay`` seconds first.
    :param drop_after: reset the connection after sending this many chunks.
    :param stall: seconds to wait before sending the status line.
    :param path: serve only requests to this path (None: any path).
    :param hang_up: read the request, then close the connection without sending a
        byte (a keep-alive connection the server had already closed: the client sees
        "Server disconnected without sending a response").
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[Chunk] = field(default_factory=list)
    drop_after: int | None = None
    stall: float = 0.0
    path: str | None = None
    hang_up: bool = False


@dataclass
class RecordedRequest:
    """One request the WireServer received: method, path, headers and body, and the
    connection it came on."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    #: the connection it came on, numbered from 1 in the order they were accepted.
    connection: int = 0

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


def _bytes(chunk: bytes | str | tuple[float, bytes | str]) -> Chunk:
    if isinstance(chunk, tuple):
        delay, data = chunk
        return (delay, data.encode() if isinstance(data, str) else data)
    return chunk.encode() if isinstance(chunk, str) else chunk


def split_every(data: bytes, size: int) -> list[bytes]:
    """``data`` cut into pieces of ``size`` bytes (the last may be shorter)."""
    return [data[i : i + size] for i in range(0, len(data), size)] or [b""]


def refused_url() -> str:
    """A loopback URL where nothing listens (connecting to it is refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    409: "Conflict",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    529: "Overloaded",
}


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    # Many clients connecting at once (a test of concurrent calls) must not be refused.
    request_queue_size = 256
    # handle_request() is called when a connection is waiting; should it be gone by
    # then, the accept gives up after this instead of holding the serving loop.
    timeout = 0.5
    wire: WireServer

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, address = super().get_request()
        # Counted busy from its accept on, before its handler's thread has started.
        self.wire._opened(connection)
        return connection, address

    def shutdown_request(self, request: Any) -> None:
        # Every accepted connection ends here, its handler done or never begun.
        try:
            super().shutdown_request(request)
        finally:
            self.wire._gone(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up mid-response is what several tests do on purpose.
        import sys

        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        sock: socket.socket = self.request
        wire = self.server.wire
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # Unbuffered file (it keeps the socket open until the handler ends, as a
        # buffered one did) under a buffer of our own: wait_idle() must see bytes that
        # arrived and were read ahead but not yet made a request.
        reader = _Reader(sock.makefile("rb", buffering=0))
        number = wire._accepted()
        while not wire.stopping.is_set():
            try:
                wire._await_request(sock, reader)
                request = _read_request(reader)
            except OSError:  # a reset while waiting for the next request
                request = None
            if request is None:
                wire._client_closed(number)
                return
            request.connection = number
            wire._record(request)
            response = wire._next(request.path)
            if not _send(sock, response, wire, number):
                return


class _Reader:
    """A connection's input with a buffer that can be looked at (``buffered``)."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._buffer = bytearray()

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def _fill(self) -> bool:
        data = self._raw.read(65536)
        if not data:
            return False
        self._buffer += data
        return True

    def _take(self, count: int) -> bytes:
        data = bytes(self._buffer[:count])
        del self._buffer[:count]
        return data

    def readline(self, limit: int = 65536) -> bytes:
        while True:
            end = self._buffer.find(b"\n", 0, limit)
            if end >= 0:
                return self._take(end + 1)
            if len(self._buffer) >= limit or not self._fill():
                return self._take(limit)

    def read(self, count: int) -> bytes:
        while len(self._buffer) < count and self._fill():
            pass
        return self._take(count)


def _readable(sock: socket.socket, timeout: float | None = 0) -> bool:
    """Whether the socket has bytes (or its end) to read, waiting up to ``timeout``
    (None: as long as it takes). A selector, not select(): no limit on the fd number."""
    with selectors.DefaultSelector() as selector:
        selector.register(sock, selectors.EVENT_READ)
        return bool(selector.select(timeout))


def _read_request(reader: _Reader) -> RecordedRequest | None:
    line = reader.readline(65536)
    if not line or not line.strip():
        return None
    method, path, _ = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        raw = reader.readline(65536)
        if raw in (b"\r\n", b"\n", b""):
            break
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    body = b""
    if "content-length" in headers:
        body = reader.read(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int(reader.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                reader.readline()
                break
            parts.append(reader.read(size))
            reader.readline()
        body = b"".join(parts)
    return RecordedRequest(method, path, headers, body)


def _send(sock: socket.socket, response: WireResponse, wire: WireServer, number: int) -> bool:
    """Send one response; False when the connection must not be reused."""
    if response.hang_up:
        # shutdown, not only close: the handler's file object still holds the socket.
        sock.shutdown(socket.SHUT_RDWR)
        sock.close()
        return False
    if response.stall and _interrupted(sock, response.stall, wire, number):
        return False
    headers = {
        "content-type": "text/event-stream",
        **{k.lower(): v for k, v in response.headers.items()},
    }
    headers["transfer-encoding"] = "chunked"
    headers.pop("content-length", None)
    head = f"HTTP/1.1 {response.status} {_REASONS.get(response.status, 'Status')}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    try:
        sock.sendall(head.encode("latin-1"))
        for index, chunk in enumerate(response.chunks):
            if response.drop_after is not None and index >= response.drop_after:
                _reset(sock)
                return False
            delay, data = chunk if isinstance(chunk, tuple) else (0.0, chunk)
            if delay and _interrupted(sock, delay, wire, number):
                return False
            if data:
                sock.sendall(b"%x\r\n%s\r\n" % (len(data), data))
        if response.drop_after is not None and response.drop_after >= len(response.chunks):
            _reset(sock)
            return False
        sock.sendall(b"0\r\n\r\n")
    except OSError:  # the client closed or reset the connection while it was answered
        wire._client_closed(number)
        return False
    return True


def _interrupted(sock: socket.socket, seconds: float, wire: WireServer, number: int) -> bool:
    """Wait ``seconds``, as a server still working on an answer does; True when it must
    stop instead: the server is stopping, or the client closed the connection (a real
    server notices that, and a test must see a consumer's early close reach it)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if wire.stopping.wait(min(left, POLL_SECONDS)):
            return True
        if _closed_by_peer(sock):
            wire._client_closed(number)
            return True
    return False


def _closed_by_peer(sock: socket.socket) -> bool:
    """Whether the client has closed its end: the socket reads as ended (or reset)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK | getattr(socket, "MSG_DONTWAIT", 0)) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _reset(sock: socket.socket) -> None:
    # SO_LINGER with a zero timeout makes close() send RST: a real dropped connection.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


class WireServer:
    """The loopback server. Use as a context manager, or ``start()`` and ``stop()``."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        #: connections accepted so far: a client that reuses its pooled connection
        #: makes several requests on one.
        self.connections = 0
        #: the connections (by number, see RecordedRequest.connection) the client
        #: closed or reset, as the server saw it: it read the end of the client's input,
        #: failed to write to it, or noticed during a delay or a stall. A hang-up or a
        #: drop the server was told to make is not one of them.
        self.closed_by_client: set[int] = set()
        self.stopping = threading.Event()
        self._queue: deque[WireResponse] = deque()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._wake: tuple[socket.socket, socket.socket] | None = None  # wakes _serve
        # The open connections: their reader while the handler waits for a request,
        # None while one is read or answered (or the handler has not begun).
        self._live: dict[socket.socket, _Reader | None] = {}
        self._accepting = 0  # the serving loop is accepting a connection

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> WireServer:
        """Start serving on a free loopback port."""
        server = _Server(("127.0.0.1", 0), _Handler)
        server.wire = self
        self._server = server
        self._wake = socket.socketpair()
        self._thread = threading.Thread(target=self._serve, args=(server,), daemon=True)
        self._thread.start()
        return self

    def _serve(self, server: _Server) -> None:
        # Not serve_forever(): it looks for a stop only every poll interval, and stop()
        # waited for that at the end of every test (50 ms each, a minute of a whole
        # run). Here stop() wakes the loop at once through the socket pair.
        assert self._wake is not None
        with selectors.DefaultSelector() as selector:
            selector.register(server, selectors.EVENT_READ)
            selector.register(self._wake[0], selectors.EVENT_READ)
            while not self.stopping.is_set():
                ready = {key.fileobj for key, _ in selector.select()}
                if server in ready and not self.stopping.is_set():
                    # Counted from before the accept: wait_idle() must not see the gap
                    # between the listening socket's backlog and the connection's entry.
                    with self._lock:
                        self._accepting += 1
                    try:
                        server.handle_request()  # a connection is waiting: accepts at once
                    finally:
                        with self._lock:
                            self._accepting -= 1

    def stop(self) -> None:
        """Stop serving and close every connection."""
        self.stopping.set()
        if self._server is not None:
            assert self._wake is not None
            self._wake[1].send(b"x")
            if self._thread is not None:
                self._thread.join(10)
            self._server.server_close()
            for end in self._wake:
                end.close()
            self._server = None

    def __enter__(self) -> WireServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port the server listens on (chosen by the system at ``start()``)."""
        assert self._server is not None, "start() the server first"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    # -- queueing -----------------------------------------------------------------------

    def add(
        self,
        body: bytes | str | Sequence[Chunk] = b"",
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        drop_after: int | None = None,
        stall: float = 0.0,
        delay: float = 0.0,
        path: str | None = None,
        content_type: str | None = None,
        hang_up: bool = False,
    ) -> WireResponse:
        """Queue a response. ``body`` is one chunk (bytes or str) or a list of chunks;
        ``delay`` waits before every chunk; ``hang_up`` closes the connection instead
        of answering."""
        if isinstance(body, str):
            body = body.encode()
        chunks: list[Chunk] = [body] if isinstance(body, bytes) else [_bytes(c) for c in body]
        if delay:
            chunks = [(delay, c) if isinstance(c, bytes) else c for c in chunks]
        all_headers = dict(headers or {})
        if content_type:
            all_headers["content-type"] = content_type
        response = WireResponse(status, all_headers, chunks, drop_after, stall, path, hang_up)
        with self._lock:
            self._queue.append(response)
        return response

    def add_json(self, payload: Any, *, status: int = 200, **kwargs: Any) -> WireResponse:
        """Queue a JSON response."""
        return self.add(
            json.dumps(payload).encode(), status=status, content_type="application/json", **kwargs
        )

    def add_sse(
        self,
        events: Iterable[str | dict[str, Any]],
        *,
        done: bool = False,
        event_names: bool = False,
        **kwargs: Any,
    ) -> WireResponse:
        """Queue an SSE stream, one chunk per event. A dict is JSON-encoded; with
        ``event_names`` a dict's ``type`` also becomes the ``event:`` line."""
        chunks: list[Chunk] = []
        for event in events:
            if isinstance(event, dict):
                line = f"data: {json.dumps(event)}\n\n"
                if event_names and "type" in event:
                    line = f"event: {event['type']}\n" + line
            else:
                line = event if event.endswith("\n\n") else f"data: {event}\n\n"
            chunks.append(line.encode())
        if done:
            chunks.append(b"data: [DONE]\n\n")
        return self.add(chunks, **kwargs)

    def add_file(
        self, file: str | Path, /, *, chunk_size: int | None = None, **kwargs: Any
    ) -> WireResponse:
        """Queue a recorded body file. Leading lines that start with ``#`` (where the
        recording says its shape comes from) are not sent. Without ``chunk_size`` each
        SSE event (up to its blank line) is one chunk."""
        data = load_recording(file)
        if chunk_size:
            return self.add(split_every(data, chunk_size), **kwargs)
        return self.add(split_events(data), **kwargs)

    # -- server side --------------------------------------------------------------------

    def wait_closed_by_client(self, connection: int, timeout: float = 10.0) -> bool:
        """Wait until the server has seen the client close ``connection`` (it notices on
        its own thread, a moment after the client closed it); False when it had not
        within ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: connection in self.closed_by_client, timeout)

    def hand_on(self) -> WireServer:
        """This server made ready for the next test that shares it: once idle
        (:meth:`wait_idle`), its recorded requests and stops cleared. A test that left
        answers queued, or a request still being answered, fails the next one's setup
        with an error saying so."""
        assert self.wait_idle(), "a previous test left a request still being answered"
        assert self.pending == 0, "a previous test left responses queued"
        self.requests.clear()
        self.stopping.clear()
        return self

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until no request is on its way or being answered: every connection the
        client left open waits for its next request with no byte of one arrived, and no
        connection waits to be accepted. False when that had not come within
        ``timeout`` seconds (a response still stalling, a client still reading).

        A client that gives up on a request it has sent (a cancelled call) leaves its
        bytes to the server, which reads them when its thread next runs: on a busy
        machine, after the next test has queued its answers, one of which the old
        request would take. A server shared by several tests waits for this before it is
        handed on."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not self._idle():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                # Bytes arriving notify nobody: look again every poll interval.
                self._changed.wait(min(left, POLL_SECONDS))
        return True

    def _idle(self) -> bool:
        # Called with the lock held: the handlers change their entries under it.
        if self._accepting or (self._server is not None and _readable(self._server.socket)):
            return False
        for sock, reader in self._live.items():
            if reader is None or reader.buffered or _readable(sock):
                return False
        return True

    def _opened(self, sock: socket.socket) -> None:
        with self._lock:
            self._live[sock] = None

    def _await_request(self, sock: socket.socket, reader: _Reader) -> None:
        """Wait (as the handler) until a request's bytes arrive, marked idle meanwhile;
        busy again, under the lock, before any of them is read."""
        with self._changed:
            self._live[sock] = reader
            self._changed.notify_all()
        try:
            if not reader.buffered:
                _readable(sock, None)
        finally:  # busy on any way out: _idle() must not look at a socket being closed
            with self._lock:
                self._live[sock] = None

    def _gone(self, sock: socket.socket) -> None:
        with self._changed:
            self._live.pop(sock, None)
            self._changed.notify_all()

    def _accepted(self) -> int:
        with self._lock:
            self.connections += 1
            return self.connections

    def _client_closed(self, number: int) -> None:
        with self._changed:
            self.closed_by_client.add(number)
            self._changed.notify_all()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next(self, path: str) -> WireResponse:
        with self._lock:
            for index, response in enumerate(self._queue):
                if response.path is None or response.path == path.split("?")[0]:
                    del self._queue[index]
                    return response
        body = f'{{"error": "wire_server: no response queued for {path}"}}'.encode()
        return WireResponse(500, {"content-type": "application/json"}, [body])

    @property
    def pending(self) -> int:
        """Responses queued and not yet served."""
        return len(self._queue)


def load_recording(path: str | Path) -> bytes:
    """A recorded body, without its leading ``#`` comment lines."""
    data = Path(path).read_bytes()
    while data.startswith(b"#"):
        _, _, data = data.partition(b"\n")
    return data


def split_events(data: bytes) -> list[bytes]:
    """SSE bytes cut after each blank line (one chunk per event)."""
    normalized = data.replace(b"\r\n", b"\n")
    pieces = normalized.split(b"\n\n")
    chunks = [p + b"\n\n" for p in pieces[:-1] if p]
    if pieces[-1]:
        chunks.append(pieces[-1])
    return chunks or [b""]
