"""The plain-http transport on the wire, against loopback servers that send exact bytes
(invented here, each shaped as RFC 9112 describes): one write per request, chunked
bodies both ways as they come, framing and keep-alive rules, protocol errors, the pool's
limits, timeouts and cancelling."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx2
import pytest
from modelplug.plain_http import NO_ANSWER, PlainHTTPTransport
from modelplug.provider_http import NO_ANSWER as KIT_NO_ANSWER

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
OK = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello"


class Served:
    """A loopback server running ``handler`` for each connection; counts them."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> Served:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            try:
                await self.handler(reader, writer)
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                writer.close()

        self.server = await asyncio.start_server(handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    def url(self, path: str = "/") -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}{path}"


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """One request's head and body (by its Content-Length or chunked)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lower = head.lower()
    if b"transfer-encoding: chunked" in lower:
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            body += await reader.readexactly(size + 2)
            if not size:
                return head, body[:-2]
            body = body[:-2]
    for line in lower.split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return head, await reader.readexactly(int(line.split(b":")[1]))
    return head, b""


def answering(*answers: bytes) -> Handler:
    """Each request on a connection gets the next answer; then the connection stays open."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for answer in answers:
            await read_request(reader)
            writer.write(answer)
            await writer.drain()
        await reader.read()

    return handler


def client(**limits: Any) -> httpx2.AsyncClient:
    pool = httpx2.Limits(**{"max_connections": 4, "max_keepalive_connections": 4, **limits})
    return httpx2.AsyncClient(mounts={"http://": PlainHTTPTransport(pool)}, timeout=5)


def test_the_kit_resends_on_this_transports_words_for_no_answer() -> None:
    assert KIT_NO_ANSWER in NO_ANSWER


def test_a_request_head_and_body_reach_the_server_in_one_write() -> None:
    first: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first.append(await reader.read(65536))
        writer.write(OK)
        await reader.read()

    async def run() -> None:
        async with Served(handler) as served, client() as http:
            answer = await http.post(served.url("/v1"), content=b'{"a": 1}')
            assert answer.content == b"hello"

    asyncio.run(run())
    assert first[0].startswith(b"POST /v1 HTTP/1.1\r\n")
    assert first[0].endswith(b'\r\n\r\n{"a": 1}')


def test_a_chunked_answer_streams_each_chunk_as_it_comes_and_the_connection_is_reused() -> None:
    got_first = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nHel\r\n")
        await got_first.wait()  # the next chunk only once the first was read
        writer.write(b"2\r\nlo\r\n0\r\nx-trailer: yes\r\n\r\n")
        await read_request(reader)
        writer.write(OK)
        await reader.read()

    async def run() -> tuple[list[bytes], bytes, int]:
        async with Served(handler) as served, client() as http:
            parts = []
            async with http.stream("GET", served.url()) as answer:
                async for part in answer.aiter_raw():
                    parts.append(part)
                    got_first.set()
            again = (await http.get(served.url())).content
            return parts, again, served.connections

    parts, again, connections = asyncio.run(run())
    assert parts == [b"Hel", b"lo"]
    assert again == b"hello" and connections == 1


def test_a_streamed_request_body_is_sent_chunked() -> None:
    bodies: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head, body = await read_request(reader)
        assert b"transfer-encoding: chunked" in head.lower()
        bodies.append(body)
        writer.write(OK)
        await reader.read()

    async def parts() -> AsyncIterator[bytes]:
        for part in (b"one ", b"", b"two"):
            yield part

    async def run() -> None:
        async with Served(handler) as served, client() as http:
            assert (await http.post(served.url(), content=parts())).content == b"hello"

    asyncio.run(run())
    assert bodies == [b"one two"]


def test_a_body_cut_short_names_the_bytes_it_got() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhell")

    async def run() -> None:
        async with Served(handler) as served, client() as http:
            await http.get(served.url())

    with pytest.raises(httpx2.RemoteProtocolError, match="received 4 of 10 bytes"):
        asyncio.run(run())


def test_a_close_before_any_byte_of_an_answer_is_the_no_answer_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)

    async def run() -> None:
        async with Served(handler) as served, client() as http:
            await http.get(served.url())

    with pytest.raises(httpx2.RemoteProtocolError) as caught:
        asyncio.run(run())
    assert KIT_NO_ANSWER in str(caught.value)


def test_informational_answers_are_read_past() -> None:
    early = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"

    async def run() -> tuple[int, bytes]:
        async with Served(answering(early + OK)) as served, client() as http:
            answer = await http.get(served.url())
            return answer.status_code, answer.content

    assert asyncio.run(run()) == (200, b"hello")


def test_an_answer_without_a_length_ends_at_the_close_and_its_connection_is_not_reused() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.0 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil the end")

    async def run() -> tuple[list[bytes], int, str]:
        async with Served(handler) as served, client() as http:
            bodies = []
            for _ in range(2):
                answer = await http.get(served.url())
                bodies.append(answer.content)
            return bodies, served.connections, answer.http_version

    assert asyncio.run(run()) == ([b"until the end"] * 2, 2, "HTTP/1.0")


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nConnection: close\r\ncontent-length: 5\r\n\r\nhello",
        OK + b"HTTP/1.1 200 OK\r\n",  # bytes nobody asked for
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n"
        b"5\r\nhello\r\n0\r\n\r\n",
    ],
    ids=["connection-close", "bytes-past-the-body", "chunked-and-a-length"],
)
def test_a_connection_is_not_reused_after(answer: bytes) -> None:
    async def run() -> tuple[list[bytes], int]:
        async with Served(answering(answer)) as served, client() as http:
            bodies = [(await http.get(served.url())).content for _ in range(2)]
            return bodies, served.connections

    assert asyncio.run(run()) == ([b"hello"] * 2, 2)


def test_head_204_and_304_answers_have_no_body_whatever_their_length_says() -> None:
    no_body = [
        b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n",
        b"HTTP/1.1 204 No Content\r\ncontent-length: 5\r\n\r\n",
        b"HTTP/1.1 304 Not Modified\r\ncontent-length: 5\r\n\r\n",
    ]

    async def run() -> tuple[list[tuple[int, bytes]], int]:
        async with Served(answering(*no_body, OK)) as served, client() as http:
            got = []
            for method in ("HEAD", "GET", "GET", "GET"):
                answer = await http.request(method, served.url())
                got.append((answer.status_code, answer.content))
            return got, served.connections

    got, connections = asyncio.run(run())
    assert got == [(200, b""), (204, b""), (304, b""), (200, b"hello")]
    assert connections == 1


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/2 200 OK\r\n\r\n",
        b"HTTP/1.1 20 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nx-a: 1\r\n folded\r\ncontent-length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nbad header\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\ncontent-length: -5\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabX",
        b"HTTP/1.1 101 Switching Protocols\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nx-long: " + b"a" * 70_000,
    ],
)
def test_a_malformed_answer_is_a_remote_protocol_error(answer: bytes) -> None:
    async def run() -> None:
        async with Served(answering(answer)) as served, client() as http:
            await http.get(served.url())

    with pytest.raises(httpx2.RemoteProtocolError):
        asyncio.run(run())


def test_what_a_hostile_server_echoes_is_never_quoted_in_an_error() -> None:
    secret = b"sk-live-0123456789abcdef"

    async def run() -> list[str]:
        errors = []
        for answer in (
            b"HTTP/1.1 " + secret + b"\r\n\r\n",
            b"HTTP/1.1 200 OK\r\n" + secret + b"\r\n\r\n",
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + secret + b"\r\n",
        ):
            async with Served(answering(answer)) as served, client() as http:
                with pytest.raises(httpx2.RemoteProtocolError) as caught:
                    await http.get(served.url())
                errors.append(str(caught.value))
        return errors

    errors = asyncio.run(run())
    assert len(errors) == 3 and not [e for e in errors if secret.decode() in e]


def test_a_header_that_could_split_the_request_is_refused_and_never_quoted() -> None:
    secret = "sk-live-0123456789abcdef"

    async def run() -> int:
        async with Served(answering(OK)) as served, client() as http:
            with pytest.raises(httpx2.LocalProtocolError) as caught:
                await http.get(served.url(), headers={"x-key": f"{secret}\r\nx-evil: 1"})
            assert secret not in str(caught.value) and "x-key" in str(caught.value)
            return served.connections

    assert asyncio.run(run()) == 0  # refused before a connection was made


def test_a_request_waits_for_the_pools_last_connection_then_gets_it() -> None:
    async def run() -> tuple[bytes, bytes, int]:
        async with Served(answering(OK, OK)) as served, client(max_connections=1) as http:
            first = await http.send(http.build_request("GET", served.url()), stream=True)
            waiting = asyncio.create_task(http.get(served.url()))
            await asyncio.sleep(0.05)
            assert not waiting.done()
            body = await first.aread()
            second = await waiting
            return body, second.content, served.connections

    assert asyncio.run(run()) == (b"hello", b"hello", 1)


def test_a_request_that_finds_no_free_connection_within_its_pool_timeout_fails() -> None:
    async def run() -> bytes:
        async with Served(answering(OK)) as served, client(max_connections=1) as http:
            first = await http.send(http.build_request("GET", served.url()), stream=True)
            with pytest.raises(httpx2.PoolTimeout):
                await http.get(served.url(), timeout=httpx2.Timeout(5, pool=0.1))
            await first.aclose()  # dropped unread: its connection is closed, the slot freed
            return (await http.get(served.url())).content

    assert asyncio.run(run()) == b"hello"


def test_a_waiter_cancelled_once_woken_passes_the_free_connection_on() -> None:
    async def run() -> bytes:
        async with Served(answering(OK, OK)) as served, client(max_connections=1) as http:
            first = await http.send(http.build_request("GET", served.url()), stream=True)
            woken = asyncio.create_task(http.get(served.url()))
            await asyncio.sleep(0.05)
            after = asyncio.create_task(http.get(served.url()))
            await asyncio.sleep(0.05)
            await first.aread()  # wakes the first waiter...
            woken.cancel()  # ...which is cancelled before it runs
            return (await asyncio.wait_for(after, 5)).content

    assert asyncio.run(run()) == b"hello"


def test_the_pool_closes_an_idle_connection_elsewhere_to_make_room() -> None:
    async def run() -> tuple[bytes, bytes]:
        async with (
            Served(answering(OK)) as one,
            Served(answering(OK)) as two,
            client(max_connections=1) as http,
        ):
            first = (await http.get(one.url())).content  # left idle in the pool
            return first, (await http.get(two.url())).content

    assert asyncio.run(run()) == (b"hello", b"hello")


def test_an_idle_connection_past_keepalive_expiry_is_not_reused() -> None:
    async def run() -> int:
        async with Served(answering(OK, OK)) as served, client(keepalive_expiry=0.05) as http:
            await http.get(served.url())
            await asyncio.sleep(0.2)
            await http.get(served.url())
            return served.connections

    assert asyncio.run(run()) == 2


def test_at_most_max_keepalive_connections_stay_open_idle() -> None:
    async def run() -> int:
        async with Served(answering(OK, OK)) as served:
            transport = PlainHTTPTransport(httpx2.Limits(max_keepalive_connections=1))
            async with httpx2.AsyncClient(mounts={"http://": transport}) as http:
                await asyncio.gather(*(http.get(served.url()) for _ in range(3)))
                return transport._pool.idle_count

    assert asyncio.run(run()) == 1


def test_a_cancelled_call_closes_its_connection_at_once() -> None:
    closed = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhi\r\n")
        if await reader.read() == b"":
            closed.set()

    async def run() -> bool:
        async with Served(handler) as served, client() as http:
            first = asyncio.Event()

            async def call() -> None:
                async with http.stream("GET", served.url()) as answer:
                    async for _ in answer.aiter_raw():
                        first.set()

            task = asyncio.create_task(call())
            await first.wait()
            task.cancel()
            await asyncio.wait_for(closed.wait(), 5)
            return closed.is_set()

    assert asyncio.run(run())


def test_the_read_timeout_is_looked_up_at_each_wait() -> None:
    # The kit reads an answer's head within its send timeout, then its body within the
    # read timeout, by changing the request's timeout mapping after the head has come.
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhe")
        await asyncio.sleep(30)

    async def run() -> None:
        async with Served(handler) as served, client() as http:
            request = http.build_request("GET", served.url())
            answer = await http.send(request, stream=True)
            request.extensions["timeout"] = {**request.extensions["timeout"], "read": 0.1}
            await answer.aread()

    with pytest.raises(httpx2.ReadTimeout):
        asyncio.run(run())


def test_a_request_the_server_never_reads_is_a_write_timeout() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)

    async def parts() -> AsyncIterator[bytes]:
        block = b"x" * (1 << 20)
        for _ in range(256):  # more than any socket buffers hold
            yield block

    async def run() -> None:
        async with Served(handler) as served, client() as http:
            await http.post(served.url(), content=parts(), timeout=httpx2.Timeout(5, write=0.2))

    with pytest.raises(httpx2.WriteTimeout):
        asyncio.run(run())


def test_a_large_answer_read_slowly_arrives_whole() -> None:
    body = bytes(range(256)) * 8192  # 2 MiB: reading pauses and resumes on the way
    answer = b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%b" % (len(body), body)

    async def run() -> bytes:
        async with Served(answering(answer)) as served, client() as http:
            got = bytearray()
            async with http.stream("GET", served.url()) as streamed:
                async for part in streamed.aiter_raw():
                    got += part
                    await asyncio.sleep(0)
            return bytes(got)

    assert asyncio.run(run()) == body


def test_an_https_url_is_not_sent_over_plain_http() -> None:
    async def run() -> None:
        transport = PlainHTTPTransport(httpx2.Limits())
        await transport.handle_async_request(httpx2.Request("GET", "https://127.0.0.1:1/"))

    with pytest.raises(httpx2.UnsupportedProtocol):
        asyncio.run(run())
