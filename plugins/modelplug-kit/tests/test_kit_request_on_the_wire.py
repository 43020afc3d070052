"""What the kit's HTTP path (provider_http) puts on the wire and reads back, through
httpx2's own client and transport: the caller's headers with Host and Content-Length and
the body, cookies a server set sent back, an encoded answer decoded, a header httpx2
refuses still refused, a header with a line break never on the wire. Loopback servers
answer with bytes invented here."""

from __future__ import annotations

import asyncio
import gzip

import httpx2
import pytest
from modelplug import Client, Endpoint, ModelError, Route
from modelplug_kit import ProviderHTTP, WireErrors

HTTP = ProviderHTTP("wire-test", section="wire-test", errors=WireErrors("wire-test"))
SSE = b'data: {"n": 1}\n\n'


def answer(body: bytes = SSE, extra: bytes = b"") -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        + extra
        + b"content-length: %d\r\n\r\n" % len(body)
        + body
    )


async def serve(answers: list[bytes], heads: list[bytes]) -> asyncio.Server:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while answers:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                heads.append(head + await reader.readexactly(length))
                writer.write(answers.pop(0))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def route(url: str) -> Route:
    return Route(provider="box", model="m", endpoint=Endpoint(type="kit", base_url=url))


async def through_kit(client: Client, url: str, headers: dict[str, str]) -> bytes:
    async with HTTP.stream(
        client, route(url), url + "/v1/x", body=b'{"a": 1}', headers=headers
    ) as a:
        return b"".join([chunk async for chunk in a])


HEADERS = {"authorization": "Bearer sk-test", "X-Custom": "1", "user-agent": "mine/1"}


def test_the_request_carries_the_callers_headers_host_length_and_body(make_client):
    heads: list[bytes] = []

    async def run() -> None:
        server = await serve([answer()], heads)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        client = make_client()
        assert await through_kit(client, url, HEADERS) == SSE
        await client.aclose()
        server.close()

    asyncio.run(run())
    (sent,) = heads
    head, body = sent.split(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /v1/x HTTP/1.1"
    fields = {
        name.lower(): value.strip() for name, _, value in (x.partition(b":") for x in lines[1:])
    }
    assert fields[b"host"].startswith(b"127.0.0.1:")
    assert fields[b"authorization"] == b"Bearer sk-test"
    assert fields[b"x-custom"] == b"1"
    assert fields[b"user-agent"] == b"mine/1"  # the caller's, not httpx2's default
    assert fields[b"content-length"] == b"8"
    assert body == b'{"a": 1}'


def test_a_cookie_the_server_sets_is_sent_back_on_the_next_call(make_client):
    heads: list[bytes] = []

    async def run() -> None:
        server = await serve([answer(extra=b"set-cookie: lb=node7; Path=/\r\n"), answer()], heads)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        client = make_client()
        await through_kit(client, url, {})
        await through_kit(client, url, {})
        await client.aclose()
        server.close()

    asyncio.run(run())
    assert b"cookie" not in heads[0].lower()
    assert b"Cookie: lb=node7" in heads[1]


async def call_once(
    client: Client, served: bytes, headers: dict[str, str], heads: list[bytes]
) -> bytes:
    """One call through the kit to a server answering ``served``; ``heads`` gets what
    the server read."""
    server = await serve([served], heads)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    try:
        return await through_kit(client, url, headers)
    finally:
        await client.aclose()
        server.close()


def test_an_encoded_answer_is_decoded_as_httpx2_decodes_it(make_client):
    served = answer(gzip.compress(SSE), b"content-encoding: gzip\r\n")
    assert asyncio.run(call_once(make_client(), served, {}, [])) == SSE


def test_a_header_httpx2_refuses_is_refused_as_before(make_client):
    with pytest.raises(UnicodeEncodeError):
        asyncio.run(call_once(make_client(), answer(), {"x-name": "caf\u00e9"}, []))


def test_a_header_with_a_line_break_never_reaches_the_wire(make_client):
    heads: list[bytes] = []
    with pytest.raises((ModelError, httpx2.LocalProtocolError)):
        asyncio.run(call_once(make_client(), answer(), {"x-name": "a\r\nx-injected: 1"}, heads))
    assert heads == []


KEEP_ALIVE = b"connection: keep-alive\r\n"


async def serve_once_per_connection(
    heads: list[bytes], *, hang_up_on_second: bool
) -> asyncio.Server:
    """llama.cpp's server as the kit meets it: an answer that says keep-alive, then the
    connection closed at once (``hang_up_on_second`` False), or kept until the next
    request has been read and closed then without a byte of an answer (True)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            heads.append(head + await reader.readexactly(8))
            writer.write(answer(extra=KEEP_ALIVE))
            await writer.drain()
            if hang_up_on_second:
                head = await reader.readuntil(b"\r\n\r\n")
                heads.append(head + await reader.readexactly(8))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


@pytest.mark.parametrize("hang_up_on_second", [False, True], ids=["closed-after", "hung-up"])
def test_calls_after_a_server_closed_its_keep_alive_connection_all_answer(
    make_client, hang_up_on_second
):
    heads: list[bytes] = []

    async def run() -> list[bytes]:
        server = await serve_once_per_connection(heads, hang_up_on_second=hang_up_on_second)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        client = make_client()
        got = [await through_kit(client, url, {}) for _ in range(3)]
        await client.aclose()
        server.close()
        return got

    assert asyncio.run(run()) == [SSE] * 3
    # Closed after its answer: each call on a fresh connection, read once. Hung up on the
    # next request: that request read twice, the second time on a fresh connection.
    assert len(heads) == (5 if hang_up_on_second else 3)
