"""When the virtual-key gate asks its key store: never for a key without the secret's
check (so a flood of made-up keys costs no store round trip), once per FRESH seconds
for a well-formed key no store has (and a key made after such a miss works once that
has passed), and once for all the calls that find a busy key's copy stale at once. A
caller without a key that can be valid is refused before its body is read or parsed."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import httpx2
import pytest
from modelplug_gateway.auth import Refusal
from modelplug_gateway.key_gate import VirtualKeyGate
from modelplug_gateway.keys import Hasher, KeyRecord, new_key
from modelplug_gateway.keys.sqlite_store import SqliteKeys
from modelplug_kit import MemoryCounters

SECRET = b"a test secret of sixteen bytes or more"


class Tick:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class CountingKeys(SqliteKeys):
    """The SQLite store, counting lookups; each lookup yields to the loop once, as a
    lookup over a socket does."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.finds = 0

    async def find(self, digest: str) -> KeyRecord | None:
        self.finds += 1
        await asyncio.sleep(0)
        return await super().find(digest)


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    hasher = Hasher(SECRET)
    keys = CountingKeys(tmp_path / "keys.sqlite3")
    tick = Tick()
    gate = VirtualKeyGate(keys, hasher, MemoryCounters(), fresh=0.5, monotonic=tick)
    return {"hasher": hasher, "keys": keys, "gate": gate, "tick": tick}


def store(world: dict[str, Any], key: str, name: str = "alice") -> None:
    record = KeyRecord(name=name, hash=world["hasher"].digest(key))
    asyncio.run(world["keys"].add(record))


def admit(gate: VirtualKeyGate, key: str) -> str:
    try:
        return asyncio.run(gate.admit({"authorization": f"Bearer {key}"}, b"", "m")).key_name or ""
    except Refusal as refused:
        return str(refused.status)


def test_a_key_without_the_secrets_check_never_reaches_the_store(world: dict[str, Any]) -> None:
    gate, keys = world["gate"], world["keys"]
    made_up = [
        "mpk-" + "x" * 55,  # the right length, no check
        new_key(Hasher(b"another gateway's secret, 16+")),  # another gateway's key
        "mpk-" + "x" * 43,  # an old-style key, no check
        "sk-not-even-ours",
    ]
    for key in made_up:
        assert admit(gate, key) == "401"
    assert keys.finds == 0
    assert gate.counts[("-", "invalid")] == len(made_up)


def test_a_well_formed_unknown_key_is_looked_up_once_per_fresh_and_works_once_made(
    world: dict[str, Any],
) -> None:
    gate, keys, tick = world["gate"], world["keys"], world["tick"]
    key = new_key(world["hasher"])
    assert admit(gate, key) == "401" and keys.finds == 1
    assert admit(gate, key) == "401" and keys.finds == 1  # the miss is remembered ...
    store(world, key)
    tick.now += 0.4
    assert admit(gate, key) == "401" and keys.finds == 1
    tick.now += 0.2  # ... for FRESH seconds only: a key made meanwhile works after that
    assert admit(gate, key) == "alice" and keys.finds == 2


def test_calls_finding_a_busy_keys_copy_stale_share_one_lookup(world: dict[str, Any]) -> None:
    gate, keys, tick = world["gate"], world["keys"], world["tick"]
    key = new_key(world["hasher"])
    store(world, key)
    assert admit(gate, key) == "alice" and keys.finds == 1
    tick.now += 1.0

    async def burst() -> list[Any]:
        headers = {"authorization": f"Bearer {key}"}
        return await asyncio.gather(*(gate.admit(headers, b"", "m") for _ in range(50)))

    tickets = asyncio.run(burst())
    assert [t.key_name for t in tickets] == ["alice"] * 50
    assert keys.finds == 2
    assert not gate._pending  # nothing left waiting


def test_a_shared_lookup_that_fails_refuses_every_waiter_with_503(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    gate, keys, tick = world["gate"], world["keys"], world["tick"]
    gate.fail = "closed"
    key = new_key(world["hasher"])
    store(world, key)
    assert admit(gate, key) == "alice"
    tick.now += 1.0

    async def broken(digest: str) -> None:
        await asyncio.sleep(0)
        raise OSError("the store is gone")

    monkeypatch.setattr(keys, "find", broken)

    async def burst() -> list[Any]:
        headers = {"authorization": f"Bearer {key}"}
        return await asyncio.gather(
            *(gate.admit(headers, b"", "m") for _ in range(10)), return_exceptions=True
        )

    outcomes = asyncio.run(burst())
    assert all(isinstance(o, Refusal) and o.status == 503 for o in outcomes)


def test_a_caller_without_a_valid_key_is_refused_before_its_body_is_read(
    world: dict[str, Any], make_gateway: Any, serve: Any
) -> None:
    key = new_key(world["hasher"])
    store(world, key)
    app = make_gateway(gate=world["gate"], max_request_bytes=1000)
    parsed: list[dict[str, Any]] = []
    real = app.shapes["openai"]

    class Counting:
        """The OpenAI shape, noting each body it is asked to parse."""

        def parse(self, body: dict[str, Any]) -> Any:
            parsed.append(body)
            return real.parse(body)

        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

    app.shapes = {**app.shapes, "openai": Counting()}

    def announce_ten_megabytes(authorization: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            # Headers announce 10 MB; none of the body follows: the answer comes anyway.
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n"
                + authorization
                + b"content-type: application/json\r\ncontent-length: 10000000\r\n\r\n"
            )
            return sock.recv(65536)

    with serve(app) as url:
        port = int(url.rsplit(":", 1)[1])
        made_up = announce_ten_megabytes(b"authorization: Bearer mpk-" + b"x" * 55 + b"\r\n")
        none = announce_ten_megabytes(b"")
        valid = announce_ten_megabytes(b"authorization: Bearer " + key.encode() + b"\r\n")
        small = httpx2.post(
            url + "/v1/chat/completions",
            json={"model": "echo", "messages": [{"role": "user", "content": "hi"}]},
            headers={"authorization": "Bearer " + new_key(Hasher(b"another secret, 16+ bytes"))},
        )
    assert made_up.startswith(b"HTTP/1.1 401") and none.startswith(b"HTTP/1.1 401")
    assert valid.startswith(b"HTTP/1.1 413")  # a valid key: the body's size is checked
    assert small.status_code == 401 and small.json()["error"]["type"] == "authentication_error"
    assert parsed == []
