"""A caller the gate refuses on its headers alone is refused by the gateway's own
protocol before the request becomes an ASGI task: the same bytes as the app's own
refusal, its metrics and log line, keep-alive and pipelining kept, and everything else
left to the app."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from modelplug.testing import FakeModel, text
from modelplug_gateway.app import PRECHECKED
from modelplug_gateway.key_gate import VirtualKeyGate
from modelplug_gateway.keys import Hasher, KeyRecord, new_key
from modelplug_gateway.keys.sqlite_store import SqliteKeys
from modelplug_limits.store import MemoryCounters

CHAT = json.dumps({"model": "echo", "messages": [{"role": "user", "content": "hi"}]}).encode()


@pytest.fixture
def keys(tmp_path: Path) -> tuple[VirtualKeyGate, str]:
    """A virtual-key gate and one valid key of it (``alice``)."""
    hasher = Hasher(b"a test secret of sixteen bytes or more")
    store = SqliteKeys(tmp_path / "keys.sqlite3")
    gate = VirtualKeyGate(store, hasher, MemoryCounters())
    key = new_key(hasher)
    asyncio.run(store.add(KeyRecord(name="alice", hash=hasher.digest(key))))
    return gate, key


def request(
    path: str = "/v1/chat/completions",
    headers: dict[str, str] | None = None,
    body: bytes = CHAT,
    version: str = "1.1",
) -> bytes:
    head = [f"POST {path} HTTP/{version}", "host: gateway", "content-type: application/json"]
    head += [f"{name}: {value}" for name, value in (headers or {}).items()]
    head.append(f"content-length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class Wire:
    """A raw keep-alive connection that reads whole answers (they carry a length)."""

    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.data = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def answer(self) -> bytes:
        while b"\r\n\r\n" not in self.data:
            self.more()
        head, _, rest = self.data.partition(b"\r\n\r\n")
        length = int(re.search(rb"content-length: (\d+)", head, re.I).group(1))  # type: ignore[union-attr]
        while len(rest) < length:
            self.data = head + b"\r\n\r\n" + rest
            self.more()
            head, _, rest = self.data.partition(b"\r\n\r\n")
        self.data = rest[length:]
        return head + b"\r\n\r\n" + rest[:length]

    def more(self) -> None:
        got = self.sock.recv(65536)
        if not got:
            raise ConnectionError("closed")
        self.data += got

    def closed(self) -> bool:
        self.sock.settimeout(5)
        return self.sock.recv(1) == b""

    def close(self) -> None:
        self.sock.close()


def without_date(answer: bytes) -> bytes:
    return re.sub(rb"\r\ndate: [^\r]*", b"", answer)


def counting_routes(app: Any) -> list[str]:
    """Each call the app's own handlers get, by path (the early path never gets here)."""
    seen: list[str] = []
    for (method, path), handler in list(app._routes.items()):

        async def counted(scope: Any, receive: Any, send: Any, _h: Any = handler) -> None:
            seen.append(scope["path"])
            await _h(scope, receive, send)

        app._routes[(method, path)] = counted
    return seen


REFUSED = [
    ("/v1/chat/completions", {"authorization": "Bearer mpk-" + "x" * 55}),
    ("/v1/chat/completions", {}),
    ("/v1/chat/completions?api_key=mpk-abc", {}),
    ("/v1/messages", {"x-api-key": "not a key", "anthropic-version": "2023-06-01"}),
    ("/v1/embeddings", {"authorization": "Bearer nope"}),
]


@pytest.mark.parametrize(("path", "headers"), REFUSED)
def test_the_early_refusal_is_the_apps_own_refusal_byte_for_byte(
    keys: Any, make_gateway: Any, serve: Any, path: str, headers: dict[str, str]
) -> None:
    gate, _ = keys
    answers = []
    for protocol in ("modelplug_gateway.corked:CorkedHTTPProtocol", "httptools"):
        app = make_gateway(gate=gate)
        reached = counting_routes(app)
        with serve(app, http=protocol) as url:
            wire = Wire(url)
            wire.send(request(path, headers))
            answers.append(without_date(wire.answer()))
            wire.close()
        # Only uvicorn's own protocol (no early refusal) hands the request to the app.
        assert reached == ([] if protocol != "httptools" else [path.partition("?")[0]])
    early, app_own = answers
    assert early == app_own
    assert early.startswith(b"HTTP/1.1 401 Unauthorized\r\n")
    assert b"mpk-" not in early.split(b"\r\n\r\n", 1)[1]


def test_a_refused_request_with_a_body_leaves_the_connection_ready_for_the_next(
    keys: Any, make_gateway: Any, serve: Any
) -> None:
    gate, key = keys
    app = make_gateway(gate=gate)
    reached = counting_routes(app)
    with serve(app) as url:
        wire = Wire(url)
        big = json.dumps({"model": "echo", "messages": [{"role": "user", "content": "x" * 50_000}]})
        wire.send(request(headers={"authorization": "Bearer wrong"}, body=big.encode()))
        first = wire.answer()
        wire.send(request(headers={"authorization": f"Bearer {key}"}))
        second = wire.answer()
        wire.close()
    assert first.startswith(b"HTTP/1.1 401 ")
    assert second.startswith(b"HTTP/1.1 200 ")
    assert json.loads(second.split(b"\r\n\r\n", 1)[1])["choices"][0]["message"]["content"] == "hi"
    assert reached == ["/v1/chat/completions"]  # the valid call only


@pytest.mark.parametrize(("version", "headers"), [("1.0", {}), ("1.1", {"connection": "close"})])
def test_a_caller_that_asks_for_close_gets_it(
    keys: Any, make_gateway: Any, serve: Any, version: str, headers: dict[str, str]
) -> None:
    gate, _ = keys
    with serve(make_gateway(gate=gate)) as url:
        wire = Wire(url)
        wire.send(request(headers=headers, version=version))
        answer = wire.answer()
        assert b"\r\nconnection: close\r\n" in answer
        assert wire.closed()
        wire.close()


def test_pipelined_requests_are_answered_in_order(keys: Any, make_gateway: Any, serve: Any) -> None:
    gate, key = keys
    slow = FakeModel([text("slow answer")], delay=0.3)
    with serve(make_gateway(slow, gate=gate)) as url:
        wire = Wire(url)
        valid = json.dumps({"model": "fake/m", "messages": [{"role": "user", "content": "hi"}]})
        wire.send(
            request(headers={"authorization": f"Bearer {key}"}, body=valid.encode())
            + request(headers={"authorization": "Bearer wrong"})
        )
        first, second = wire.answer(), wire.answer()
        wire.close()
    assert first.startswith(b"HTTP/1.1 200 ") and b"slow answer" in first
    assert second.startswith(b"HTTP/1.1 401 ")


def test_a_refusal_is_counted_and_logged_without_the_key_or_query(
    keys: Any, make_gateway: Any, serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="modelplug.gateway.requests")
    gate, _ = keys
    made_up = "mpk-" + "y" * 55
    with serve(make_gateway(gate=gate)) as url:
        wire = Wire(url)
        wire.send(request(f"/v1/chat/completions?api_key={made_up}"))
        wire.answer()
        wire.send(request(headers={"authorization": f"Bearer {made_up}"}))
        wire.answer()
        wire.close()
        metrics = httpx2.get(f"{url}/metrics").text
    lines = [json.loads(r.getMessage()) for r in caplog.records]
    assert [(line["path"], line["status"], line["key"]) for line in lines] == [
        ("/v1/chat/completions", 401, None),
        ("/v1/chat/completions", 401, None),
    ]
    assert made_up not in caplog.text and "api_key" not in caplog.text
    assert 'requests_total{endpoint="chat",route="none",status_class="4xx"} 2' in metrics
    assert 'outcome="key_in_url"' in metrics and 'outcome="invalid"' in metrics
    assert made_up not in metrics


def test_a_valid_key_is_checked_once(keys: Any, make_gateway: Any, serve: Any) -> None:
    gate, key = keys
    checked: list[int] = []
    original = gate.precheck

    def precheck(headers: Any, query: bytes) -> None:
        checked.append(1)
        original(headers, query)

    gate.precheck = precheck  # type: ignore[method-assign]
    with serve(make_gateway(gate=gate)) as url:
        answer = httpx2.post(
            f"{url}/v1/chat/completions",
            content=CHAT,
            headers={"authorization": f"Bearer {key}", "content-type": "application/json"},
        )
    assert answer.status_code == 200
    assert checked == [1]


def test_what_the_early_path_does_not_take_is_left_to_the_app(keys: Any, make_gateway: Any) -> None:
    gate, _ = keys
    app = make_gateway(gate=gate)
    refuse: Callable[..., Any] = app.refuse_early
    wrong = [(b"authorization", b"Bearer wrong")]
    assert refuse(b"GET", b"/v1/models", wrong, {}) is None
    assert refuse(b"POST", b"/v1/other", wrong, {}) is None
    assert refuse(b"POST", b"/v1/chat/completions", wrong, {})[0] == 401
    app.draining = True  # the app answers 503 while draining, whoever asks
    assert refuse(b"POST", b"/v1/chat/completions", wrong, {}) is None
    app.draining = False
    del app.shapes["anthropic"]  # the app says the shape is not installed (404)
    assert refuse(b"POST", b"/v1/messages", [(b"x-api-key", b"wrong")], {}) is None
    open_app = make_gateway()  # no gate with a precheck: nothing to refuse early
    assert open_app.refuse_early(b"POST", b"/v1/chat/completions", wrong, {}) is None


def test_headers_that_pass_are_marked_in_the_scope_extensions(keys: Any, make_gateway: Any) -> None:
    gate, key = keys
    app = make_gateway(gate=gate)
    extensions: dict[str, Any] = {}
    headers = [(b"authorization", f"Bearer {key}".encode())]
    assert app.refuse_early(b"POST", b"/v1/chat/completions", headers, extensions) is None
    assert extensions == {PRECHECKED: True}
