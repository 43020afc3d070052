"""Frames ready at the same time leave as one piece (one HTTP chunk), and leave before
the gateway waits on the upstream; a wait, a cancel, a failure and a close behave as
they do for the shape's own generator."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
from modelplug import hookimpl
from modelplug.contract.types import (
    Done,
    Endpoint,
    Event,
    Message,
    ModelInfo,
    Response,
    Route,
    TextBlock,
    TextDelta,
)
from modelplug_gateway.ready_frames import write_together


async def collect(frames: AsyncIterator[bytes], first: bytes = b"") -> list[bytes]:
    written: list[bytes] = []

    async def write(piece: bytes) -> None:
        written.append(piece)

    await write_together(frames, first, write)
    return written


def test_frames_made_without_waiting_are_one_piece() -> None:
    async def frames() -> AsyncIterator[bytes]:
        for part in (b"b", b"", b"c", b"d"):
            yield part

    assert asyncio.run(collect(frames(), b"a")) == [b"abcd"]


class Frames:
    """Frames from an iterator class whose ``__anext__`` is a coroutine, not a
    generator: a shape need not be an async generator."""

    def __init__(self) -> None:
        self.parts = [b"a", b"b", None, b"c"]

    def __aiter__(self) -> Frames:
        return self

    async def __anext__(self) -> bytes:
        if not self.parts:
            raise StopAsyncIteration
        part = self.parts.pop(0)
        if part is None:
            await asyncio.sleep(0)
            return b"-"
        return part


def test_an_iterator_class_is_driven_the_same_way() -> None:
    assert asyncio.run(collect(Frames())) == [b"ab", b"-c"]


def test_a_wait_ends_a_piece_and_the_order_is_kept() -> None:
    async def frames() -> AsyncIterator[bytes]:
        yield b"1"
        yield b"2"
        await asyncio.sleep(0)
        yield b"3"
        await asyncio.sleep(0.01)
        yield b"4"
        yield b"5"

    assert asyncio.run(collect(frames())) == [b"12", b"3", b"45"]


def test_nothing_at_all_writes_nothing() -> None:
    async def frames() -> AsyncIterator[bytes]:
        await asyncio.sleep(0)
        yield b""

    assert asyncio.run(collect(frames())) == []


def test_a_piece_is_written_before_the_wait_that_follows_it() -> None:
    async def run() -> list[str]:
        seen: list[str] = []
        gate = asyncio.Event()

        async def frames() -> AsyncIterator[bytes]:
            yield b"before"
            seen.append("waiting")
            await gate.wait()
            yield b"after"

        async def write(piece: bytes) -> None:
            seen.append(piece.decode())
            gate.set()

        await write_together(frames(), b"", write)
        return seen

    # "before" was written while the shape waited, not with "after".
    assert asyncio.run(run()) == ["waiting", "before", "after"]


def test_a_value_the_wait_gives_reaches_the_shape() -> None:
    async def frames() -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bytes] = loop.create_future()
        loop.call_later(0.01, future.set_result, b"from the future")
        yield await future

    assert asyncio.run(collect(frames())) == [b"from the future"]


def test_a_cancel_during_the_wait_reaches_the_shape() -> None:
    async def run() -> list[str]:
        seen: list[str] = []

        async def frames() -> AsyncIterator[bytes]:
            yield b"x"
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                seen.append("cancelled in the shape")
                raise
            yield b"never"

        async def write(piece: bytes) -> None:
            seen.append(piece.decode())

        task = asyncio.create_task(write_together(frames(), b"", write))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return seen

    assert asyncio.run(run()) == ["x", "cancelled in the shape"]


def test_a_failure_after_frames_writes_them_first() -> None:
    async def frames() -> AsyncIterator[bytes]:
        yield b"made"
        yield b" before"
        raise RuntimeError("the shape broke")

    async def run() -> list[bytes]:
        written: list[bytes] = []

        async def write(piece: bytes) -> None:
            written.append(piece)

        with pytest.raises(RuntimeError, match="the shape broke"):
            await write_together(frames(), b"", write)
        return written

    assert asyncio.run(run()) == [b"made before"]


def test_a_failure_during_the_wait_is_raised_from_it() -> None:
    async def frames() -> AsyncIterator[bytes]:
        yield b"a"
        await asyncio.sleep(0)
        raise ValueError("upstream went away")

    async def run() -> list[bytes]:
        written: list[bytes] = []

        async def write(piece: bytes) -> None:
            written.append(piece)

        with pytest.raises(ValueError, match="upstream went away"):
            await write_together(frames(), b"", write)
        return written

    assert asyncio.run(run()) == [b"a"]


@pytest.mark.parametrize("failure", [ConnectionResetError("caller gone"), asyncio.CancelledError()])
def test_a_write_that_fails_while_the_shape_waits_lets_the_shape_close(
    failure: BaseException,
) -> None:
    # The caller went away during the write: the shape's step, left waiting on the
    # upstream, is ended as a cancel ends it, and the shape's own close still runs.
    async def run() -> list[str]:
        seen: list[str] = []

        async def frames() -> AsyncIterator[bytes]:
            try:
                yield b"a"
                await asyncio.sleep(30)
                yield b"b"
            except asyncio.CancelledError:
                seen.append("shape told")
                raise
            finally:
                await asyncio.sleep(0)  # an async cleanup (closing the upstream)
                seen.append("shape cleaned up")

        async def write(piece: bytes) -> None:
            raise failure

        shape = frames()
        with pytest.raises(type(failure)):
            await write_together(shape, b"", write)
        await shape.aclose()  # what the gateway does next: no "already running"
        seen.append("closed")
        return seen

    assert asyncio.run(run()) == ["shape told", "shape cleaned up", "closed"]


# ------------------------------------------------------------------ over the wire


class Burst:
    """A provider that sends its deltas in bursts: ``first`` at once, then waits until
    the test lets it go on (a threading.Event: the test runs in another thread)."""

    def __init__(self) -> None:
        self.go_on = threading.Event()

    @hookimpl
    def modelplug_resolve(self, spec: str) -> Route | None:
        if not spec.startswith("burst/"):
            return None
        return Route(provider="burst", model="m", endpoint=Endpoint(type="burst"), info=ModelInfo())

    @hookimpl
    def modelplug_stream(self, route: Route) -> AsyncIterator[Event] | None:
        return self._play() if route.provider == "burst" else None

    async def _play(self) -> AsyncIterator[Event]:
        for word in ("one", " two", " three"):
            yield TextDelta(text=word)
        while not self.go_on.is_set():
            await asyncio.sleep(0.005)
        yield TextDelta(text=" four")
        message = Message(role="assistant", content=[TextBlock(text="one two three four")])
        yield Done(response=Response(message=message, model="burst/m"))


class Chunks:
    """Reads a chunked answer off a raw socket, one HTTP chunk at a time."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.data = b""
        while b"\r\n\r\n" not in self.data:
            self.more()
        self.data = self.data.split(b"\r\n\r\n", 1)[1]

    def more(self) -> None:
        got = self.sock.recv(65536)
        if not got:
            raise ConnectionError("the gateway closed the connection")
        self.data += got

    def next(self) -> bytes:
        while b"\r\n" not in self.data:
            self.more()
        size_line, self.data = self.data.split(b"\r\n", 1)
        size = int(size_line, 16)
        while len(self.data) < size + 2:
            self.more()
        chunk, self.data = self.data[:size], self.data[size + 2 :]
        return chunk


def post_stream(url: str, model: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    body = json.dumps(
        {"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    ).encode()
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    return sock


def test_a_burst_is_one_chunk_sent_before_the_wait_and_the_rest_another(
    make_gateway: Any, serve: Any
) -> None:
    burst = Burst()
    with serve(make_gateway(burst)) as url:
        sock = post_stream(url, "burst/m")
        try:
            chunks = Chunks(sock)
            first = chunks.next()  # arrives while the provider still waits
            burst.go_on.set()
            rest = [chunks.next(), chunks.next()]
        finally:
            sock.close()
    texts = [json.loads(f[6:])["choices"][0]["delta"] for f in first.split(b"\n\n") if f]
    assert texts == [
        {"role": "assistant", "content": ""},
        {"content": "one"},
        {"content": " two"},
        {"content": " three"},
    ]
    assert rest[1] == b""  # the end of the answer
    later = rest[0].split(b"\n\n")
    assert b'"content": " four"' in later[0] or b'"content":" four"' in later[0]
    assert later[-2] == b"data: [DONE]"
