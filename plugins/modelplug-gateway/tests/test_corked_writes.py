"""The corked transport under uvicorn's protocol: what the app sends in one turn of the
loop leaves as one write at the end of that turn, in order, and nothing is lost at a
close. (Every other gateway test runs on it too: conftest serves with it, as serve does.)"""

from __future__ import annotations

import asyncio
import socket
import threading

import httpx2
from modelplug_gateway.corked import PROTOCOL, CorkedHTTPProtocol, CorkedTransport
from modelplug_gateway.server import uvicorn_config
from modelplug_gateway.settings import GatewaySettings


class Recorded:
    """A transport that records what is written to it."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False
        self.aborted = False

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed or self.aborted

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: object = None) -> object:
        return {"peername": ("127.0.0.1", 9)}.get(name, default)


def test_the_writes_of_one_turn_leave_as_one_at_its_end() -> None:
    async def run() -> tuple[list[bytes], list[bytes], int]:
        real = Recorded()
        corked = CorkedTransport(real, asyncio.get_running_loop())  # type: ignore[arg-type]
        corked.write(b"HTTP/1.1 200 OK\r\n\r\n")
        corked.write(b"")
        corked.writelines([b"a", bytearray(b"b")])
        during = list(real.writes)
        held = corked.get_write_buffer_size()
        await asyncio.sleep(0)  # the turn ends
        corked.write(b"c")
        await asyncio.sleep(0)
        return during, real.writes, held

    during, writes, held = asyncio.run(run())
    assert during == []
    assert held == len(b"HTTP/1.1 200 OK\r\n\r\nab")
    assert writes == [b"HTTP/1.1 200 OK\r\n\r\nab", b"c"]


def test_a_close_writes_what_is_held_first_and_an_abort_drops_it() -> None:
    async def run() -> tuple[Recorded, Recorded]:
        loop = asyncio.get_running_loop()
        closed, aborted = Recorded(), Recorded()
        for real in (closed, aborted):
            corked = CorkedTransport(real, loop)  # type: ignore[arg-type]
            corked.write(b"0\r\n\r\n")
            if real is closed:
                corked.close()
            else:
                corked.abort()
        await asyncio.sleep(0)  # the scheduled flush finds nothing left
        return closed, aborted

    closed, aborted = asyncio.run(run())
    assert closed.writes == [b"0\r\n\r\n"] and closed.closed
    assert aborted.writes == [] and aborted.aborted
    # The rest of the interface is the real transport's.
    corked = CorkedTransport(Recorded(), asyncio.new_event_loop())  # type: ignore[arg-type]
    assert corked.get_extra_info("peername") == ("127.0.0.1", 9)


def test_serve_runs_uvicorn_on_the_corked_protocol() -> None:
    config = uvicorn_config(object(), GatewaySettings())
    assert config.http == PROTOCOL  # by name: worker processes import it themselves
    config.load()
    assert config.http_protocol_class is CorkedHTTPProtocol


def test_a_stream_through_the_corked_server_is_whole_and_the_connection_kept(
    make_gateway, serve
) -> None:
    """A streamed answer twice on one kept-alive connection (raw socket: every byte as
    uvicorn wrote it), then a plain one: chunked framing intact, nothing lost."""
    app = make_gateway()
    with serve(app) as url:
        port = int(url.rsplit(":", 1)[1])
        body = (
            b'{"model": "echo/x", "messages": [{"role": "user", "content": "hi"}], "stream": true}'
        )
        request = (
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            for _ in range(2):
                sock.sendall(request)
                got = b""
                while not got.endswith(b"0\r\n\r\n"):
                    part = sock.recv(65536)
                    assert part, got
                    got += part
                head, _, chunked = got.partition(b"\r\n\r\n")
                assert head.startswith(b"HTTP/1.1 200")
                assert b"transfer-encoding: chunked" in head
                frames = _unchunk(chunked)
                assert frames.endswith(b"data: [DONE]\n\n")
                assert b"hi" in frames  # the echo provider says it back
        plain = httpx2.post(
            url + "/v1/chat/completions",
            json={"model": "echo/x", "messages": [{"role": "user", "content": "hi"}]},
        )
        assert plain.status_code == 200
        assert plain.json()["object"] == "chat.completion"


def _unchunk(data: bytes) -> bytes:
    out = b""
    while True:
        size, _, rest = data.partition(b"\r\n")
        n = int(size, 16)
        if n == 0:
            assert rest == b"\r\n"
            return out
        out += rest[:n]
        assert rest[n : n + 2] == b"\r\n"
        data = rest[n + 2 :]


def test_an_answer_leaves_when_it_is_complete_not_after_the_apps_work_behind_it(
    serve,
) -> None:
    """The last send of an answer writes it at once: an app that goes on working in the
    same turn (here it blocks the loop until the caller has read the whole answer) does
    not hold the caller's bytes back."""
    read_whole = threading.Event()

    async def app(scope: dict, receive: object, send: object) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] == "lifespan.startup":  # type: ignore[operator]
                await send({"type": "lifespan.startup.complete"})  # type: ignore[operator]
            await send({"type": "lifespan.shutdown.complete"})  # type: ignore[operator]
            return
        headers = [(b"content-type", b"text/plain")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"whole"})  # type: ignore[operator]
        read_whole.wait(10)  # the bookkeeping after an answer, taken to the extreme

    with serve(app) as url:
        answer = httpx2.get(url + "/", timeout=5)
        read_whole.set()
    assert answer.status_code == 200 and answer.text == "whole"
