"""The loopback server sees connections as a real server does: how many were opened,
which one each request came on, and which ones the client closed, even while it waits
out a delay or a stall."""

from __future__ import annotations

import socket
import time

import httpx2
from modelplug_kit.testing import WireServer


def test_two_requests_on_one_pooled_connection_come_on_connection_1(
    wire_server: WireServer,
) -> None:
    wire_server.add(b"one")
    wire_server.add(b"two")
    with httpx2.Client() as http:
        assert http.get(wire_server.url).text == "one"
        assert http.get(wire_server.url).text == "two"
        assert wire_server.connections == 1
        assert [r.connection for r in wire_server.requests] == [1, 1]
        assert wire_server.closed_by_client == set()
    # Closing the client closes its idle connection: the server reads the end of it.
    assert wire_server.wait_closed_by_client(1)


def test_a_second_client_comes_on_connection_2(wire_server: WireServer) -> None:
    wire_server.add(b"one")
    wire_server.add(b"two")
    for _ in range(2):
        with httpx2.Client() as http:
            http.get(wire_server.url)
    assert [r.connection for r in wire_server.requests] == [1, 2]
    assert wire_server.connections == 2


def test_a_client_that_leaves_during_a_delay_is_seen_before_the_delay_ends(
    wire_server: WireServer,
) -> None:
    # The rest would come after 60 s; the wait below gives up long before that, so
    # what it sees is the server noticing the close, not the delay running out.
    wire_server.add([b"first", (60.0, b"never")])
    with httpx2.Client() as http, http.stream("GET", wire_server.url) as response:
        assert next(response.iter_raw()) == b"first"
    assert wire_server.wait_closed_by_client(1, timeout=10.0)


def test_a_client_that_leaves_during_a_stall_is_seen_before_the_stall_ends(
    wire_server: WireServer,
) -> None:
    wire_server.add(b"late", stall=60.0)
    with socket.create_connection(("127.0.0.1", wire_server.port)) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n")
        while not wire_server.requests:  # read by the server: its stall has begun
            time.sleep(0.01)
    assert wire_server.wait_closed_by_client(1, timeout=10.0)
    assert wire_server.pending == 0


def test_a_hang_up_the_server_was_told_to_make_is_not_the_client_closing(
    wire_server: WireServer,
) -> None:
    wire_server.add(b"", hang_up=True)
    wire_server.add([b"a", b"b"], drop_after=1)
    with httpx2.Client() as http:
        for _ in range(2):
            try:
                http.get(wire_server.url)
            except httpx2.TransportError:
                pass
    assert [r.connection for r in wire_server.requests] == [1, 2]
    assert wire_server.closed_by_client == set()
