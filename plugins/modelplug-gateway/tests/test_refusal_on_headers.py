"""A caller the gate refuses on its headers alone (a made-up key, no key, a key in the
URL) is refused by the app before it reads the body: ``receive`` is never called for
it, on uvicorn and on granian alike. The connection stays usable (keep-alive, pipelined
requests in order), the caller who asks for close gets it, and the refusal is counted
and logged without the key."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
from pathlib import Path
from typing import Any

import httpx2
import pytest
from modelplug.testing import FakeModel, text
from modelplug_gateway.key_gate import VirtualKeyGate
from modelplug_gateway.keys import Hasher, KeyRecord, new_key
from modelplug_gateway.keys.sqlite_store import SqliteKeys
from modelplug_kit import MemoryCounters

CHAT = json.dumps({"model": "echo", "messages": [{"role": "user", "content": "hi"}]}).encode()


@pytest.fixture(params=["uvicorn", "granian"])
def server(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def keys(tmp_path: Path) -> tuple[VirtualKeyGate, str]:
    """A virtual-key gate and one valid key of it (``alice``)."""
    hasher = Hasher(b"a test secret of sixteen bytes or more")
    store = SqliteKeys(tmp_path / "keys.sqlite3")
    gate = VirtualKeyGate(store, hasher, MemoryCounters())
    key = new_key(hasher)
    asyncio.run(store.add(KeyRecord(name="alice", hash=hasher.digest(key))))
    return gate, key


class Reads:
    """The app, with a note of each request whose body it asked for (``receive``)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.paths: list[str] = []
        self.reads: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        self.paths.append(path)

        async def noted() -> Any:
            self.reads.append(path)
            return await receive()

        await self.app(scope, noted, send)


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
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.sock.close()


REFUSED = [
    ("/v1/chat/completions", {"authorization": "Bearer mpk-" + "x" * 55}),
    ("/v1/chat/completions", {}),
    ("/v1/chat/completions?api_key=mpk-abc", {}),
    ("/v1/messages", {"x-api-key": "not a key", "anthropic-version": "2023-06-01"}),
    ("/v1/embeddings", {"authorization": "Bearer nope"}),
]


@pytest.mark.parametrize(("path", "headers"), REFUSED)
def test_a_caller_refused_on_its_headers_gets_401_and_its_body_is_never_read(
    keys: Any, make_gateway: Any, serve: Any, path: str, headers: dict[str, str]
) -> None:
    gate, _ = keys
    app = Reads(make_gateway(gate=gate))
    with serve(app) as url:
        wire = Wire(url)
        wire.send(request(path, headers))
        answer = wire.answer()
        wire.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 401")
    assert json.loads(body)["error"]["type"] == "authentication_error"
    assert b"mpk-" not in body
    assert app.paths == [path.partition("?")[0]]  # the app answered it...
    assert app.reads == []  # ...without asking for its body


def test_a_valid_key_has_its_body_read(keys: Any, make_gateway: Any, serve: Any) -> None:
    gate, key = keys
    app = Reads(make_gateway(gate=gate))
    with serve(app) as url:
        answer = httpx2.post(
            f"{url}/v1/chat/completions",
            content=CHAT,
            headers={"authorization": f"Bearer {key}", "content-type": "application/json"},
        )
    assert answer.status_code == 200
    assert answer.json()["choices"][0]["message"]["content"] == "hi"
    assert app.reads[:1] == ["/v1/chat/completions"]


def test_a_refused_request_with_a_body_leaves_the_connection_ready_for_the_next(
    keys: Any, make_gateway: Any, serve: Any
) -> None:
    # 20 kB: granian drains an unread body that size and keeps the connection; a much
    # larger one (70 kB) it does not read on: it closes the connection after the answer.
    gate, key = keys
    with serve(make_gateway(gate=gate)) as url:
        wire = Wire(url)
        big = json.dumps({"model": "echo", "messages": [{"role": "user", "content": "x" * 20_000}]})
        wire.send(request(headers={"authorization": "Bearer wrong"}, body=big.encode()))
        first = wire.answer()
        wire.send(request(headers={"authorization": f"Bearer {key}"}))
        second = wire.answer()
        wire.close()
    assert first.startswith(b"HTTP/1.1 401 ")
    assert second.startswith(b"HTTP/1.1 200 ")
    assert json.loads(second.split(b"\r\n\r\n", 1)[1])["choices"][0]["message"]["content"] == "hi"


@pytest.mark.parametrize(("version", "headers"), [("1.0", {}), ("1.1", {"connection": "close"})])
def test_a_refused_caller_that_asks_for_close_gets_it(
    keys: Any, make_gateway: Any, serve: Any, version: str, headers: dict[str, str]
) -> None:
    gate, _ = keys
    with serve(make_gateway(gate=gate)) as url:
        wire = Wire(url)
        wire.send(request(headers=headers, version=version))
        answer = wire.answer()
        assert b" 401 " in answer.split(b"\r\n", 1)[0]
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


def test_a_valid_key_is_checked_on_its_headers_once(
    keys: Any, make_gateway: Any, serve: Any
) -> None:
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
