"""The test kit's loopback server really serves bytes, drops and records."""

from __future__ import annotations

import httpx2
import pytest
from modelplug_kit.testing import WireServer, refused_url, split_events, split_every


def test_serves_chunks_in_order_and_records_requests(wire_server: WireServer) -> None:
    wire_server.add([b"data: 1\n\n", b"data: 2\n\n"], headers={"x-request-id": "r1"})
    with (
        httpx2.Client() as http,
        http.stream("POST", wire_server.url + "/v1/chat", json={"a": 1}) as response,
    ):
        pieces = list(response.iter_raw())
    assert b"".join(pieces) == b"data: 1\n\ndata: 2\n\n"
    assert response.headers["x-request-id"] == "r1"
    request = wire_server.requests[0]
    assert (request.method, request.path, request.json()) == ("POST", "/v1/chat", {"a": 1})


def test_drop_after_resets_the_connection_mid_body(wire_server: WireServer) -> None:
    wire_server.add([b"data: 1\n\n", b"data: 2\n\n"], drop_after=1)
    with (
        httpx2.Client() as http,
        pytest.raises(httpx2.TransportError),
        http.stream("GET", wire_server.url) as response,
    ):
        for _ in response.iter_raw():
            pass


def test_responses_can_be_bound_to_a_path(wire_server: WireServer) -> None:
    wire_server.add(b"second", path="/b")
    wire_server.add(b"first", path="/a")
    with httpx2.Client() as http:
        assert http.get(wire_server.url + "/a").text == "first"
        assert http.get(wire_server.url + "/b").text == "second"
        assert http.get(wire_server.url + "/c").status_code == 500  # nothing queued


def test_a_delay_holds_back_the_next_chunk_until_it_has_passed(wire_server: WireServer) -> None:
    wire_server.add([b"a", (0.05, b"b")])
    wire_server.add([b"a", (60.0, b"b")])
    with httpx2.Client() as http:
        # A short delay passes by itself: the whole body arrives.
        assert http.get(wire_server.url).text == "ab"
        # During a long one the first chunk has arrived and the next has not been sent:
        # stopping the server then ends the body without it.
        with http.stream("GET", wire_server.url) as response:
            chunks = response.iter_raw()
            assert next(chunks) == b"a"
            wire_server.stopping.set()
            with pytest.raises(httpx2.RemoteProtocolError):
                next(chunks)


def test_refused_url_refuses() -> None:
    with httpx2.Client() as http, pytest.raises(httpx2.ConnectError):
        http.get(refused_url())


def test_split_helpers() -> None:
    assert split_every(b"abcde", 2) == [b"ab", b"cd", b"e"]
    assert split_events(b"data: 1\n\ndata: 2\n\n") == [b"data: 1\n\n", b"data: 2\n\n"]


def test_hand_on_empties_an_idle_server_and_refuses_one_with_answers_left() -> None:
    with WireServer() as server:
        server.add_json({"ok": True})
        httpx2.get(server.url + "/x")
        assert server.requests
        assert server.hand_on() is server and server.requests == []
        server.add_json({"left": True})
        with pytest.raises(AssertionError, match="left responses queued"):
            server.hand_on()
