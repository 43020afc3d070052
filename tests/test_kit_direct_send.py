"""The kit's direct path to the plain-http transport (provider_http._Send): a request
with a body to an ``http://`` URL goes to the transport straight, past httpx2's client
layers, and must reach the server exactly as httpx2 would have sent it: the same head,
byte for byte, cookies a server set sent back, an encoded answer decoded, a header
httpx2 refuses still refused. Loopback servers answer with bytes invented here."""

from __future__ import annotations

import asyncio
import gzip

import httpx2
import pytest
from modelplug import Client
from modelplug.plain_http import PlainHTTPTransport
from modelplug.plugin import Endpoint, ModelError, ProviderHTTP, Route, WireErrors

HTTP = ProviderHTTP("direct-test", section="direct-test", errors=WireErrors("direct-test"))
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


def test_the_direct_path_sends_the_head_httpx2_sends_byte_for_byte(make_client):
    heads: list[bytes] = []

    async def run() -> None:
        server = await serve([answer(), answer()], heads)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        client = make_client()
        assert await through_kit(client, url, HEADERS) == SSE
        # What httpx2's own client sends for the same request, over the same transport.
        limits = httpx2.Limits(max_connections=10)
        async with httpx2.AsyncClient(mounts={"http://": PlainHTTPTransport(limits)}) as http:
            request = http.build_request(
                "POST", url + "/v1/x", content=b'{"a": 1}', headers=dict(HEADERS)
            )
            response = await http.send(request, stream=True)
            await response.aread()
        await client.aclose()
        server.close()

    asyncio.run(run())
    direct, through_httpx2 = heads
    assert direct == through_httpx2
    assert b"Host: 127.0.0.1:" in direct and b"user-agent: mine/1" in direct
    assert direct.endswith(b'Content-Length: 8\r\n\r\n{"a": 1}')


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
