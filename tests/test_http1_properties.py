"""modelplug.http1 on any bytes: a chunked body split anywhere decodes to itself, any
mutation of an answer ends in an answer or BadAnswer (never another exception), a
request head never holds a line its headers did not make, and mutated answers served
over a real socket end in a Response or one of httpx2's transport errors."""

from __future__ import annotations

import asyncio

import httpx2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug.http1 import (
    BadAnswer,
    BadRequest,
    Chunked,
    framing,
    head_end,
    keeps_alive,
    parse_head,
    request_head,
)
from modelplug.plain_http import PlainHTTPTransport

# Invented, as RFC 9112's examples are shaped: a chunked answer with an extension and a
# trailer, and a Content-Length one.
CHUNKED = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    b"d;note=1\r\ndata: hello\n\n\r\n6\r\ndata: \r\n0\r\nx-checksum: 1\r\n\r\n"
)
LENGTH = b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\nconnection: keep-alive\r\n\r\nhello there"


def chunked_wire(parts: list[bytes], extensions: bool) -> bytes:
    wire = b"".join(
        b"%x%b\r\n%b\r\n" % (len(part), b";x=y" if extensions else b"", part)
        for part in parts
        if part
    )
    return wire + b"0\r\ntrailer: t\r\n\r\n"


@given(
    st.lists(st.binary(max_size=300), max_size=8),
    st.booleans(),
    st.lists(st.integers(min_value=0, max_value=4000), max_size=12),
    st.binary(max_size=20),
)
def test_a_chunked_body_split_anywhere_decodes_to_itself(
    parts: list[bytes], extensions: bool, cuts: list[int], after: bytes
) -> None:
    wire = chunked_wire(parts, extensions)
    cuts = sorted(c for c in cuts if c < len(wire))
    pieces = [wire[a:b] for a, b in zip([0, *cuts], [*cuts, len(wire)], strict=True)]
    body, buffer, decoded = Chunked(), bytearray(), []
    for piece in pieces:
        buffer += piece
        decoded.append(body.take(buffer))
    buffer += after
    decoded.append(body.take(buffer))
    assert body.done
    assert b"".join(decoded) == b"".join(parts)
    assert bytes(buffer) == after  # bytes past the body are left for whoever reads next


def mutated(data: bytes, edits: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for at, value in edits:
        if not out:
            break
        at %= len(out)
        if value < 256:
            out[at] = value
        elif value < 400:
            del out[at]
        else:
            out.insert(at, value % 256)
    return bytes(out)


EDITS = st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 500)), max_size=6)


@given(st.sampled_from([CHUNKED, LENGTH]), EDITS, st.sampled_from([b"GET", b"HEAD"]))
def test_a_mutated_answer_is_read_or_refused_as_bad(
    answer: bytes, edits: list[tuple[int, int]], method: bytes
) -> None:
    wire = bytearray(mutated(answer, edits))
    try:
        end = head_end(wire)
        if end < 0:
            return
        head = parse_head(bytes(wire[:end]))
        body = framing(head, method)
        keeps_alive(head, body)
        if body.kind == "chunked":
            del wire[:end]
            Chunked().take(wire)
    except BadAnswer:
        pass


@given(st.binary(max_size=200), st.integers(0, 200))
def test_head_end_looking_on_from_where_it_stopped_finds_the_same_end(
    data: bytes, looked: int
) -> None:
    # The transport looks again from where the last look stopped, once more bytes came.
    looked = min(looked, len(data))
    if head_end(data[:looked]) < 0:
        assert head_end(data, looked) == head_end(data)


@given(st.lists(st.tuples(st.binary(min_size=1, max_size=12), st.binary(max_size=30)), max_size=6))
def test_a_request_head_holds_only_the_lines_its_headers_make(
    headers: list[tuple[bytes, bytes]],
) -> None:
    try:
        head = request_head(b"POST", b"/v1/chat?x=1", headers)
    except BadRequest:
        return
    lines = head.split(b"\r\n")
    assert len(lines) == len(headers) + 3  # request line, headers, blank, after it
    assert head.count(b"\n") == head.count(b"\r\n") == len(headers) + 2
    for line, (name, value) in zip(lines[1:], headers, strict=False):
        assert line == name + b": " + value


async def serve_once(answer: bytes) -> tuple[asyncio.Server, str]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(answer)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([CHUNKED, LENGTH]), EDITS)
def test_a_mutated_answer_over_a_socket_is_a_response_or_a_transport_error(
    answer: bytes, edits: list[tuple[int, int]]
) -> None:
    async def run() -> None:
        server, url = await serve_once(mutated(answer, edits))
        transport = PlainHTTPTransport(httpx2.Limits())
        async with server, httpx2.AsyncClient(mounts={"http://": transport}, timeout=5) as http:
            try:
                await http.get(url)
            except httpx2.TransportError:
                pass
            except httpx2.DecodingError:
                pass  # httpx2's own reading of a mutated body's encoding, past the wire

    asyncio.run(run())
