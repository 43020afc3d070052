"""VirtualKeyGate.admit and settle, in one process: keys in an SQLite file, counters in
memory, a clock the tests move."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from modelplug.contract.types import Cost, Usage
from modelplug_gateway.auth import Refusal
from modelplug_gateway.key_gate import VirtualKeyGate
from modelplug_gateway.keys import Hasher, KeyRecord, new_key
from modelplug_gateway.keys.secret import load_secret
from modelplug_gateway.keys.sqlite_store import SqliteKeys
from modelplug_kit import MemoryCounters

T0 = 1_800_000_000.0 + 15  # 15 s into a minute


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    hasher = Hasher(load_secret(tmp_path / "data", None))
    keys = SqliteKeys(tmp_path / "data" / "keys.sqlite3")
    clock = Clock()
    gate = VirtualKeyGate(keys, hasher, MemoryCounters(clock), clock=clock, fresh=0.0)
    return {"hasher": hasher, "keys": keys, "gate": gate, "clock": clock, "dir": tmp_path / "data"}


def make(world: dict[str, Any], name: str = "alice", **fields: Any) -> str:
    key = new_key(world["hasher"])
    record = KeyRecord(name=name, hash=world["hasher"].digest(key), created=T0, **fields)
    run(world["keys"].add(record))
    return key


def bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def refusal(
    gate: VirtualKeyGate, headers: dict[str, str], model: str = "m", query: bytes = b""
) -> Refusal:
    with pytest.raises(Refusal) as caught:
        run(gate.admit(headers, query, model))
    return caught.value


ROUTE: Any = object()  # the gate only asks whether the call reached a provider


def test_a_key_is_mpk_32_random_url_safe_bytes_and_a_check_under_the_secret() -> None:
    hasher = Hasher(b"a test secret of sixteen bytes or more")
    key = new_key(hasher)
    assert key.startswith("mpk-")
    body = key.removeprefix("mpk-")
    assert len(body) == 43 + 12  # 32 bytes and a 9-byte check in URL-safe base64
    assert set(body) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert new_key(hasher) != key
    assert hasher.checks(key)
    assert not Hasher(b"another secret, 16+ bytes").checks(key)
    changed = key[:10] + ("A" if key[10] != "A" else "B") + key[11:]
    assert not hasher.checks(changed)
    for odd in ("", "mpk-", key + "x", key[:-1], "mpk-" + "é" * 55, key[:-1] + "\x00"):
        assert not hasher.checks(odd)


def test_the_store_keeps_a_keyed_hash_and_files_are_owner_only(world: dict[str, Any]) -> None:
    key = make(world)
    data: Path = world["dir"]
    for path in (data / "keys.sqlite3", data / "gateway-key-secret"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        assert key.encode() not in path.read_bytes()
        assert key.removeprefix("mpk-").encode() not in path.read_bytes()
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    # A different secret gives a different hash: the file alone does not verify a key.
    assert Hasher(b"another secret, 16+ bytes").digest(key) != world["hasher"].digest(key)


def test_the_secret_comes_from_the_variable_key_secret_env_names(tmp_path: Path) -> None:
    from modelplug import Client
    from modelplug_gateway.keys import hasher_for

    secret = "shared-by-every-machine-of-this-deployment"
    environ = {"GW_SECRET": secret, "MODELPLUG_DATA_DIR": str(tmp_path)}
    client = Client(config={"gateway": {"key_secret_env": "GW_SECRET"}}, environ=environ)
    assert hasher_for(client).digest("mpk-a") == Hasher(secret.encode()).digest("mpk-a")
    assert not (tmp_path / "gateway-key-secret").exists()


def test_a_valid_key_is_admitted_by_either_header(world: dict[str, Any]) -> None:
    key = make(world)
    gate = world["gate"]
    assert run(gate.admit(bearer(key), b"", "m")).key_name == "alice"
    assert run(gate.admit({"x-api-key": key}, b"", "m")).key_name == "alice"


def test_missing_wrong_revoked_and_expired_keys_get_401_without_the_key(
    world: dict[str, Any],
) -> None:
    gate = world["gate"]
    key = make(world)
    old = make(world, "old", expires=T0 + 10)
    assert refusal(gate, {}).status == 401
    wrong = refusal(gate, bearer("mpk-" + "x" * 43))
    assert (wrong.status, wrong.kind) == (401, "authentication_error")
    assert "x" * 20 not in wrong.message
    world["clock"].now += 11
    expired = refusal(gate, bearer(old))
    assert expired.status == 401 and "expired" in expired.message and old not in expired.message
    record = run(world["keys"].named("alice"))
    run(world["keys"].replace(record, record.with_changes(revoked=True)))
    revoked = refusal(gate, bearer(key))
    assert revoked.status == 401 and "revoked" in revoked.message and key not in revoked.message


def test_an_unknown_key_is_compared_against_the_dummy_hash(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import hmac

    import modelplug_gateway.key_gate as key_gate

    compared: list[tuple[str, str]] = []
    real = hmac.compare_digest

    def spy(a: str, b: str) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(key_gate.hmac, "compare_digest", spy)
    key = make(world)
    run(world["gate"].admit(bearer(key), b"", "m"))
    refusal(world["gate"], bearer(new_key(world["hasher"])))
    # Both paths checked the key's check and did one constant-time comparison of two
    # full digests (the module is shared: the hasher's comparisons are seen here too).
    checks = [c for c in compared if len(c[0]) == 12]
    digests = [c for c in compared if len(c[0]) != 12]
    assert len(checks) == 2 and len(digests) == 2
    assert digests[1][1] == world["hasher"].dummy
    assert all(len(a) == len(b) == 64 for a, b in digests)


def test_a_key_in_the_query_string_is_refused_and_not_logged(
    world: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    key = make(world)
    caplog.set_level(logging.DEBUG)
    for query in (f"key={key}".encode(), b"api_key=abc", f"x={key}".encode()):
        refused = refusal(world["gate"], bearer(key), query=query)
        assert refused.status == 401 and "URL" in refused.message
        assert key not in refused.message
    assert key not in caplog.text


def test_a_model_outside_the_keys_list_gets_403(world: dict[str, Any]) -> None:
    key = make(world, models=("fast", "live/gemma"))
    assert run(world["gate"].admit(bearer(key), b"", "fast")).key_name == "alice"
    refused = refusal(world["gate"], bearer(key), model="anthropic/claude-opus-4")
    assert (refused.status, refused.kind) == (403, "permission_error")


def test_over_rpm_is_refused_at_once_with_retry_after(world: dict[str, Any]) -> None:
    key = make(world, rpm=3)
    gate = world["gate"]
    for _ in range(3):
        run(gate.admit(bearer(key), b"", "m"))
    refused = refusal(gate, bearer(key))
    assert refused.status == 429
    assert refused.retry_after == 45  # the minute's window ends 45 s from now
    assert "3 requests per minute" in refused.message
    world["clock"].now += 45
    assert run(gate.admit(bearer(key), b"", "m")).key_name == "alice"


def test_over_tpm_counts_the_tokens_settled(world: dict[str, Any]) -> None:
    key = make(world, tpm=100)
    gate = world["gate"]
    ticket = run(gate.admit(bearer(key), b"", "m"))
    run(ticket.settle(ROUTE, Usage(input=60, output=50), None))
    refused = refusal(gate, bearer(key))
    assert refused.status == 429 and "100 tokens per minute" in refused.message


def test_a_budget_counts_real_costs_and_its_429_names_the_budget_and_reset(
    world: dict[str, Any],
) -> None:
    key = make(world, budget=Decimal("0.10"), period="day")
    gate = world["gate"]
    admitted = 0
    refused = None
    for _ in range(20):
        try:
            ticket = run(gate.admit(bearer(key), b"", "m"))
        except Refusal as exc:
            refused = exc
            break
        admitted += 1
        run(
            ticket.settle(
                ROUTE, Usage(input=10, output=10), Cost(amount=Decimal("0.01"), source="test")
            )
        )
    assert admitted == 10
    assert refused is not None
    assert refused.status == 429 and refused.kind == "rate_limit_error"
    assert "budget of 0.10 USD per day" in refused.message
    assert "resets at 2027-01-16T00:00:00Z" in refused.message
    assert refused.retry_after is not None and refused.retry_after > 3600
    assert gate.spent["alice"] == Decimal("0.10")


def test_a_call_that_never_reached_a_provider_costs_nothing(world: dict[str, Any]) -> None:
    key = make(world, budget=Decimal("0.02"), period="day")
    gate = world["gate"]
    first = run(gate.admit(bearer(key), b"", "m"))
    run(first.settle(ROUTE, Usage(input=1, output=1), Cost(amount=Decimal("0.01"), source="test")))
    for _ in range(5):  # each reserves 0.01 (the last call's cost) and gives it back
        run(run(gate.admit(bearer(key), b"", "m")).settle(None, None, None))
    second = run(gate.admit(bearer(key), b"", "m"))
    run(second.settle(ROUTE, Usage(input=1, output=1), Cost(amount=Decimal("0.01"), source="test")))
    assert refusal(gate, bearer(key)).status == 429


def test_a_revocation_is_seen_once_the_cached_copy_is_older_than_fresh(
    world: dict[str, Any],
) -> None:
    key = make(world)
    gate = VirtualKeyGate(
        world["keys"], world["hasher"], MemoryCounters(), clock=world["clock"], fresh=0.2
    )
    run(gate.admit(bearer(key), b"", "m"))
    record = run(world["keys"].named("alice"))
    run(world["keys"].replace(record, record.with_changes(revoked=True)))
    import time

    time.sleep(0.25)
    assert refusal(gate, bearer(key)).status == 401


def test_rotation_stops_the_old_key(world: dict[str, Any]) -> None:
    old = make(world)
    new = new_key(world["hasher"])
    record = run(world["keys"].named("alice"))
    run(world["keys"].replace(record, record.with_changes(hash=world["hasher"].digest(new))))
    assert refusal(world["gate"], bearer(old)).status == 401
    assert run(world["gate"].admit(bearer(new), b"", "m")).key_name == "alice"


def test_metrics_label_by_key_name_never_the_key(world: dict[str, Any]) -> None:
    key = make(world, budget=Decimal("1"))
    gate = world["gate"]
    ticket = run(gate.admit(bearer(key), b"", "m"))
    run(ticket.settle(ROUTE, Usage(input=1, output=1), Cost(amount=Decimal("0.25"), source="test")))
    refusal(gate, bearer(new_key(world["hasher"])))
    text = "\n".join(gate.metrics_lines())
    assert 'modelplug_gateway_key_spend_usd_total{key="alice"} 0.25' in text
    assert 'modelplug_gateway_key_requests_total{key="alice",outcome="admitted"} 1' in text
    assert 'modelplug_gateway_key_requests_total{key="-",outcome="invalid"} 1' in text
    assert key not in text and "mpk-" not in text


def test_no_file_is_world_readable_after_a_second_open(world: dict[str, Any]) -> None:
    make(world)
    os.chmod(world["dir"] / "gateway-key-secret", 0o644)
    load_secret(world["dir"], None)
    assert stat.S_IMODE((world["dir"] / "gateway-key-secret").stat().st_mode) == 0o600


def test_a_budget_keys_first_call_to_a_model_runs_alone_until_priced(
    world: dict[str, Any],
) -> None:
    key = make(world, budget=Decimal("0.10"), period="day")
    gate = world["gate"]

    async def burst() -> list[Any]:
        return await asyncio.gather(
            *(gate.admit(bearer(key), b"", "m") for _ in range(5)), return_exceptions=True
        )

    first = run(burst())
    admitted = [t for t in first if not isinstance(t, Refusal)]
    refused = [t for t in first if isinstance(t, Refusal)]
    assert len(admitted) == 1 and len(refused) == 4
    assert refused[0].status == 429 and refused[0].retry_after == 1.0
    cost = Cost(amount=Decimal("0.03"), source="test")
    run(admitted[0].settle(ROUTE, Usage(input=1, output=1), cost))
    # Priced: each call now reserves 0.03, so 0.07 left lets exactly 2 of 5 through.
    second = run(burst())
    assert sum(not isinstance(t, Refusal) for t in second) == 2
    # Another worker sharing the counters learns the price from them, not by a probe.
    other = VirtualKeyGate(world["keys"], world["hasher"], gate.counters, clock=world["clock"])
    assert other.estimate("alice", "m") is None
    last = refusal(other, bearer(key))
    assert "budget of 0.10 USD" in last.message
