"""What the WireServer these modules share (conftest.py's ``wire_server``) relies on to be
handed on cleanly: ``wait_idle()`` returns only once a request sent and left behind has
been read and answered, so it cannot take an answer the next test queues.

The cause it covers: a failed embedding call cancels its other batches, one of which
may already have been sent; on a busy machine the server read it after the next test
had queued its answer, and that test got "no response queued"."""

from __future__ import annotations

import socket

import httpx2
from modelplug_kit.testing import WireServer

REQUEST = b"POST /v1/embeddings HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}"


def test_a_request_read_ahead_behind_a_stalled_one_is_answered_before_idle(
    wire_server: WireServer,
) -> None:
    # The second request arrives with the first and waits, read but not yet answered,
    # while the first one's answer stalls: idle comes only after both are answered.
    wire_server.add(b"first", stall=0.3)
    with socket.create_connection(("127.0.0.1", wire_server.port)) as sock:
        sock.sendall(REQUEST + REQUEST)
        assert wire_server.wait_idle()
        assert len(wire_server.requests) == 2
    # What the next test queues is its own.
    wire_server.add(b"next")
    with httpx2.Client() as http:
        assert http.post(wire_server.url + "/v1/embeddings").text == "next"


def test_a_request_sent_by_a_client_that_left_is_answered_before_idle(
    wire_server: WireServer,
) -> None:
    # A cancelled call: the request's bytes are sent and the connection closed at once.
    with socket.create_connection(("127.0.0.1", wire_server.port)) as sock:
        sock.sendall(REQUEST)
    assert wire_server.wait_idle()
    assert len(wire_server.requests) == 1
    wire_server.add(b"next")
    with httpx2.Client() as http:
        assert http.post(wire_server.url + "/v1/embeddings").text == "next"
    assert wire_server.pending == 0


def test_a_connection_kept_open_between_requests_is_idle(wire_server: WireServer) -> None:
    wire_server.add(b"one")
    wire_server.add(b"two")
    before = wire_server.connections
    with httpx2.Client() as http:
        assert http.get(wire_server.url).text == "one"
        # The pooled connection stays open, waiting for a next request: that is idle.
        assert wire_server.wait_idle()
        assert http.get(wire_server.url).text == "two"
    assert wire_server.connections - before == 1


def test_an_answer_still_stalling_for_its_client_is_not_idle(wire_server: WireServer) -> None:
    wire_server.add(b"late", stall=60.0)
    with socket.create_connection(("127.0.0.1", wire_server.port)) as sock:
        sock.sendall(REQUEST)
        assert not wire_server.wait_idle(timeout=0.3)
    # The client left: the server notices during the stall and stops answering.
    assert wire_server.wait_idle()
