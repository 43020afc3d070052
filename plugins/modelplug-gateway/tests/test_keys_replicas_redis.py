"""Replicas on one real redis-server: four worker processes, each with its own
VirtualKeyGate over the Redis key store and counters, hold one key's rpm and budget
together, see a revocation within a second, and follow ``[redis] fail`` when Redis dies; and
the Redis round trips a keyed call costs, counted by redis-server.

The workers run the gate itself (admit, then settle at a known price of $0.01 a call),
which is the whole of what a gateway worker does for a key. Without redis-server the tests skip,
unless the environment variable CI is set: then a missing redis-server fails the run."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from modelplug import Client
from modelplug_gateway.keys import KeyRecord, hasher_for, new_key, open_store

# -- a real redis-server (the approach of modelplug-redis's conftest) --------------
_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A free loopback port not handed out before in this process: what modelplug-redis
    heard of a Redis is kept by its URL, so a new server must never get an old URL."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


def ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One redis-server process: ``url``, ``kill()`` (SIGKILL, as a crash) and
    ``start()`` again on the same port and directory."""

    def __init__(self, executable: str, directory: Path) -> None:
        self.executable = executable
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.executable,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--dir", str(self.directory),
                "--save", "",
                "--appendonly", "no",
                "--daemonize", "no",
                "--loglevel", "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while not ping(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.02)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
            self.process = None


def redis_executable() -> str:
    found = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None
    )
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(
                "redis-server is not installed and CI is set (apt-get install redis-server)"
            )
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    return found


@pytest.fixture
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(redis_executable(), tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_config(redis_server: RedisServer) -> dict[str, object]:
    """Settings that point the stores at the test server. The timeout is one only a hang
    reaches: on a busy machine a slow answer would otherwise count as Redis down, and the
    store would go on in this process's memory. A test that means Redis down kills it,
    and a killed server refuses at once."""
    return {"redis": {"url": redis_server.url, "timeout": 5.0, "retry_interval": 0.0}}


# -- the workers -----------------------------------------------------------------

WORKER = r"""
import asyncio, json, sys, time
from decimal import Decimal
from modelplug import Client
from modelplug.contract.types import Cost, Usage
from modelplug_gateway.auth import Refusal
from modelplug_gateway.key_gate import VirtualKeyGate

spec = json.loads(sys.argv[1])
client = Client(config=spec["config"], environ=spec["environ"], entry_points=True)
ROUTE = object()

async def one(gate, key):
    try:
        ticket = await gate.admit({"authorization": "Bearer " + key}, b"", "m")
    except Refusal as exc:
        return str(exc.status)
    if spec["cost"]:
        cost = Cost(amount=Decimal(spec["cost"]), source="test")
        await ticket.settle(ROUTE, Usage(input=5, output=5), cost)
    return "ok"

async def main():
    gate = VirtualKeyGate.for_client(client)
    for command in sys.stdin:
        command = json.loads(command)
        if command["start_at"]:
            await asyncio.sleep(max(0.0, command["start_at"] - time.time()))
        results = await asyncio.gather(*(one(gate, command["key"]) for _ in range(command["calls"])))
        print(json.dumps({"results": results, "degraded": gate.degraded_total}), flush=True)

asyncio.run(main())
"""


class Workers:
    """``count`` worker processes that run a burst of admissions on each command."""

    def __init__(self, tmp_path: Path, config: dict[str, Any], count: int = 4) -> None:
        environ = {
            "MODELPLUG_DATA_DIR": str(tmp_path / "data"),
            "GW_SECRET": "one secret for every replica of this test",
        }
        env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
        env["MODELPLUG_CONFIG"] = str(tmp_path / "user.toml")
        (tmp_path / "user.toml").write_text("")
        self.spec = {"config": config, "environ": environ, "cost": None}
        self.env = env
        self.count = count
        self.processes: list[subprocess.Popen[str]] = []

    def start(self, cost: str | None) -> None:
        self.spec["cost"] = cost
        self.processes = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER, json.dumps(self.spec)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=self.env,
            )
            for _ in range(self.count)
        ]

    def burst(self, key: str, calls: int, *, together: bool = True) -> list[dict[str, Any]]:
        start_at = time.time() + 0.5 if together else 0
        for process in self.processes:
            assert process.stdin is not None
            process.stdin.write(
                json.dumps({"key": key, "calls": calls, "start_at": start_at}) + "\n"
            )
            process.stdin.flush()
        out = []
        for process in self.processes:
            assert process.stdout is not None
            line = process.stdout.readline()
            if not line:
                raise AssertionError(process.stderr.read() if process.stderr else "no output")
            out.append(json.loads(line))
        return out

    def stop(self) -> None:
        for process in self.processes:
            if process.stdin:
                process.stdin.close()
        for process in self.processes:
            process.wait(timeout=30)


@pytest.fixture
def workers(tmp_path: Path, redis_config: dict[str, Any]) -> Any:
    config = {**redis_config, "gateway": {"key_secret_env": "GW_SECRET"}}
    made = Workers(tmp_path, config)
    client = Client(config=config, environ=made.spec["environ"])
    yield made, client
    made.stop()


def create(client: Client, name: str, **fields: Any) -> str:
    hasher = hasher_for(client)
    key = new_key(hasher)
    record = KeyRecord(name=name, hash=hasher.digest(key), created=time.time(), **fields)
    asyncio.run(open_store(client).add(record))
    return key


def revoke(client: Client, name: str) -> None:
    async def work() -> None:
        store = open_store(client)
        record = await store.named(name)
        assert record is not None
        await store.replace(record, record.with_changes(revoked=True))

    asyncio.run(work())


def tally(out: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for worker in out:
        for result in worker["results"]:
            counts[result] = counts.get(result, 0) + 1
    return counts


def wait_for_a_fresh_minute() -> None:
    # rpm counts per minute on the epoch: a burst must not straddle a minute's edge.
    into = time.time() % 60
    if into > 50:
        time.sleep(60 - into + 0.1)


def test_four_workers_hold_one_keys_rpm_together(workers: Any) -> None:
    pool, client = workers
    key = create(client, "team", rpm=100)
    pool.start(cost=None)
    wait_for_a_fresh_minute()
    counts = tally(pool.burst(key, 100))
    assert counts == {"ok": 100, "429": 300}


def test_four_workers_hold_one_keys_budget_together(workers: Any) -> None:
    pool, client = workers
    key = create(client, "budgeted", budget=Decimal("0.10"), period="day")
    pool.start(cost="0.01")
    # The key's first call prices the model (one call at a time until then).
    first = tally(pool.burst(key, 1, together=False))
    assert first.get("ok", 0) >= 1
    rest = tally(pool.burst(key, 25))
    assert first.get("ok", 0) + rest.get("ok", 0) == 10
    assert rest.get("429", 0) + first.get("429", 0) == 4 * 26 - 10


def test_a_revoked_key_is_refused_by_every_worker_within_a_second(workers: Any) -> None:
    pool, client = workers
    key = create(client, "leaving")
    pool.start(cost=None)
    assert tally(pool.burst(key, 5)) == {"ok": 20}
    revoke(client, "leaving")
    time.sleep(1.0)
    assert tally(pool.burst(key, 5)) == {"401": 20}


def test_redis_killed_fail_open_keeps_known_keys_working(
    workers: Any,
    redis_server: RedisServer,
) -> None:
    pool, client = workers
    key = create(client, "known", rpm=1000)
    stranger = create(client, "never-seen-by-workers")
    pool.start(cost=None)
    assert tally(pool.burst(key, 5)) == {"ok": 20}
    redis_server.kill()
    time.sleep(0.6)  # past the workers' FRESH copy: they must ask Redis and find it gone
    out = pool.burst(key, 5)
    assert tally(out) == {"ok": 20}
    assert all(worker["degraded"] > 0 for worker in out)
    # A key no worker has verified cannot be checked while Redis is down.
    assert tally(pool.burst(stranger, 2)) == {"503": 8}


def test_redis_killed_fail_closed_refuses_with_503(
    tmp_path: Path,
    redis_server: RedisServer,
    redis_config: dict[str, Any],
) -> None:
    redis_config["redis"]["fail"] = "closed"  # type: ignore[index]
    config = {**redis_config, "gateway": {"key_secret_env": "GW_SECRET"}}
    pool = Workers(tmp_path, config)
    client = Client(config=config, environ=pool.spec["environ"])
    key = create(client, "strict", rpm=1000)
    pool.start(cost=None)
    try:
        assert tally(pool.burst(key, 5)) == {"ok": 20}
        redis_server.kill()
        assert tally(pool.burst(key, 5)) == {"503": 20}
    finally:
        pool.stop()


# -- the real server: modelplug gateway serve --workers 4 ----------------------------


def test_four_gateway_workers_on_one_redis_let_exactly_rpm_through(
    tmp_path: Path,
    redis_config: dict[str, Any],
) -> None:
    import signal
    import textwrap

    import httpx2
    import openai

    port = free_port()
    redis_url = redis_config["redis"]["url"]  # type: ignore[index]
    config = tmp_path / "user.toml"
    config.write_text(
        textwrap.dedent(
            f"""
            [gateway]
            port = {port}
            workers = 4
            auth = "keys"
            key_secret_env = "GW_SECRET"
            shutdown_grace = 1

            [redis]
            url = "{redis_url}"
            timeout = 5.0
            retry_interval = 0.0
            """
        )
    )
    os.chmod(config, 0o600)
    environ = {
        "MODELPLUG_CONFIG": str(config),
        "MODELPLUG_PLUGINS": "modelplug-gateway,modelplug-limits,modelplug-redis",
        "MODELPLUG_DATA_DIR": str(tmp_path / "data"),
        "GW_SECRET": "one secret for every replica of this test",
    }
    client = Client(user_config=config, environ=environ)
    key = create(client, "team", rpm=100)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
    # A file, not a pipe: the request log writes a line per request, and a pipe nobody
    # reads during the run fills up and stalls the workers.
    log_path = tmp_path / "gateway.log"
    log_file = log_path.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "modelplug", "gateway", "serve"],
        env={**env, **environ},
        cwd=tmp_path,
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(400):
            try:
                if httpx2.get(url + "/health").status_code == 200:
                    break
            except httpx2.TransportError:
                time.sleep(0.05)

        async def calls() -> dict[str, int]:
            sdk = openai.AsyncOpenAI(base_url=url + "/v1", api_key=key, max_retries=0)
            lanes = asyncio.Semaphore(50)
            counts: dict[str, int] = {}

            async def one() -> None:
                async with lanes:
                    try:
                        await sdk.chat.completions.create(
                            model="echo", messages=[{"role": "user", "content": "hi"}]
                        )
                        outcome = "ok"
                    except openai.RateLimitError as exc:
                        assert int(exc.response.headers["retry-after"]) >= 1
                        outcome = "429"
                counts[outcome] = counts.get(outcome, 0) + 1

            await asyncio.gather(*(one() for _ in range(400)))
            await sdk.close()
            return counts

        wait_for_a_fresh_minute()
        counts = asyncio.run(calls())
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    log_file.close()
    output = log_path.read_text()
    assert counts == {"ok": 100, "429": 300}, output
    # The request log is on by default at INFO: a JSON line per request, the key's name
    # and never the key.
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    chat = [line for line in lines if line["path"] == "/v1/chat/completions"]
    assert len(chat) == 400 and {line["key"] for line in chat} == {"team"}
    assert sorted(line["status"] for line in chat) == [200] * 100 + [429] * 300
    assert key not in output


def test_a_frozen_redis_holds_a_known_keys_call_one_timeout_not_one_per_store(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    import signal

    from modelplug.contract.types import Cost, Usage
    from modelplug_gateway.key_gate import FRESH, VirtualKeyGate

    # A call touches two stores (the key lookup, then the counters: reservation and
    # settlement). A frozen server answers nothing, so each command sent to it waits
    # out the timeout; once the first has, the other store knows Redis is down and
    # sends nothing. Apart, each sent its own and waited its own timeout. Counted, not
    # timed: the commands each store sent while Redis was frozen.
    config = {
        "redis": {"url": redis_server.url, "timeout": 2.0, "retry_interval": 60.0},
        "gateway": {"key_secret_env": "GW_SECRET"},
    }
    environ = {"MODELPLUG_DATA_DIR": str(tmp_path / "data"), "GW_SECRET": "x" * 32}
    client = Client(config=config, environ=environ, entry_points=True)
    key = create(client, "frozen", rpm=1000, tpm=10**6)
    headers = {"authorization": f"Bearer {key}"}

    async def scenario() -> tuple[list[int], list[bool], VirtualKeyGate, str]:
        gate = VirtualKeyGate.for_client(client)
        lookups, counters = gate.keys.connection, gate.counters.connection  # type: ignore[attr-defined]
        assert lookups is not counters
        ticket = await gate.admit(headers, b"", "m")
        await ticket.settle(object(), Usage(input=5, output=5), None)  # type: ignore[arg-type]
        assert not lookups.is_down() and not counters.is_down()
        assert redis_server.process is not None
        os.kill(redis_server.process.pid, signal.SIGSTOP)
        try:
            await asyncio.sleep(FRESH + 0.1)  # the key's copy is stale: the store is asked
            before = [lookups.round_trips, counters.round_trips]
            # (wait_for: a hang guard, no timing asserted)
            ticket = await asyncio.wait_for(gate.admit(headers, b"", "m"), 60)
            cost = Cost(amount=Decimal("0.01"), source="test")
            await ticket.settle(object(), Usage(input=50, output=50), cost)  # type: ignore[arg-type]
            sent = [lookups.round_trips - before[0], counters.round_trips - before[1]]
            return sent, [lookups.is_down(), counters.is_down()], gate, ticket.key_name or ""
        finally:
            os.kill(redis_server.process.pid, signal.SIGCONT)

    sent, down, gate, name = asyncio.run(scenario())
    assert name == "frozen"  # fail = "open": a key this worker verified keeps working
    assert gate.counts[("frozen", "admitted")] == 2
    # The key lookup was sent and timed out (an outage is marked only on a failure);
    # the reservation and the settlement sent nothing: one timeout, not two or three.
    assert sent == [1, 0]
    assert down == [True, True]
    assert gate.degraded_total >= 1  # said so: counted in this process's memory


# -- round trips per call, counted by redis-server ----------------------------------


class RedisCounts:
    """(socket reads redis-server processed: one per round trip; EVALSHA calls: the
    limits scripts, a reservation or a settlement each), read over one connection made
    and used once up front: a new connection's own handshake (redis-py's CLIENT SETINFO
    commands) is read by the server in one read or two, as it happens to arrive, which
    would put a read more or less into a count now and then."""

    def __init__(self, server: RedisServer) -> None:
        import redis as sync_redis

        self._raw = sync_redis.Redis.from_url(server.url)
        self()

    def __call__(self) -> tuple[int, int]:
        reads = int(self._raw.info("stats")["total_reads_processed"])
        scripts = self._raw.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)
        return reads, int(scripts)

    def close(self) -> None:
        self._raw.close()


def test_a_keyed_call_with_the_limits_policy_costs_one_round_trip_two_to_settle(
    tmp_path: Path, redis_server: RedisServer, redis_config: dict[str, Any], monkeypatch: Any
) -> None:
    # As deployed: virtual keys (rpm and tpm), modelplug-limits' policy in the Client
    # (with no [limits]: it reserves the rooms servers reported), both on Redis. The
    # gate's reservation tells the policy's store that no room exists, so the policy
    # asks nothing; a settlement with something to correct is the one more.
    import httpx2
    import modelplug_redis.counters
    from modelplug import find_policies
    from modelplug_gateway.app import Gateway
    from modelplug_gateway.key_gate import VirtualKeyGate
    from modelplug_gateway.settings import GatewaySettings

    # What Redis said last is trusted for the whole test (and the key's record too): the
    # count must not depend on how fast this machine runs it.
    monkeypatch.setattr(modelplug_redis.counters, "ROOMS_FRESH", 3600.0)
    config = {**redis_config, "gateway": {"key_secret_env": "GW_SECRET"}}
    environ = {"MODELPLUG_DATA_DIR": str(tmp_path / "data"), "GW_SECRET": "x" * 32}
    client = Client(
        config=config,
        environ=environ,
        enable=["modelplug-gateway", "modelplug-limits", "modelplug-redis"],
    )
    assert find_policies(client, "limits")
    key = create(client, "counted", rpm=10_000, tpm=10**8)
    gate = VirtualKeyGate.for_client(client)
    gate.fresh = 3600.0
    app = Gateway(client, GatewaySettings(), gate)
    calls = 8

    async def scenario() -> dict[str, tuple[int, int]]:
        transport = httpx2.ASGITransport(app=app)  # returns once the app is done
        async with httpx2.AsyncClient(
            transport=transport,
            base_url="http://gateway",
            headers={"authorization": f"Bearer {key}"},
        ) as http:

            async def call(text: str, stream: bool) -> None:
                body = {
                    "model": "echo",
                    "messages": [{"role": "user", "content": text}],
                    "stream": stream,
                }
                answer = await http.post("/v1/chat/completions", json=body)
                assert answer.status_code == 200, answer.text

            for stream in (False, True):  # scripts loaded, the key looked up, priced
                await call("hi", stream)
            counted: dict[str, tuple[int, int]] = {}
            redis_counts = RedisCounts(redis_server)
            before = redis_counts()
            after = redis_counts()
            counted["nothing"] = (after[0] - before[0], after[1] - before[1])
            for label, texts, stream in (
                ("same", ["hi"] * calls, False),
                ("same streamed", ["hi"] * calls, True),
                # 2 tokens, then 4: every settlement has something to correct.
                ("settling", ["hi there", "hi"] * (calls // 2), False),
            ):
                before = redis_counts()
                for text in texts:
                    await call(text, stream)
                after = redis_counts()
                counted[label] = (after[0] - before[0], after[1] - before[1])
            redis_counts.close()
        await client.aclose()
        return counted

    counted = asyncio.run(scenario())
    reads, scripts = counted.pop("nothing")  # the counting's own reads
    assert scripts == 0
    per_call = {label: ((r - reads) / calls, s / calls) for label, (r, s) in counted.items()}
    assert per_call == {
        "same": (1.0, 1.0),
        "same streamed": (1.0, 1.0),
        "settling": (2.0, 2.0),
    }


def test_a_frozen_redis_holds_each_keyed_gateway_call_one_timeout_at_most(
    tmp_path: Path, redis_server: RedisServer, monkeypatch: Any
) -> None:
    # Every Redis step of a keyed call through the gateway (the key's lookup, the gate's
    # reservation, the fallback's cooldown, the limits policy's reservation and
    # settlement, the gate's settlement) with Redis frozen: the first command to meet
    # it waits out the timeout; every later step of that call, and every later call,
    # goes on from the outage state. Before, a step after retry_interval (a settlement
    # after an answer slower than it) was sent again and waited again, and a script
    # waited out four timeouts. Counted: the commands sent that failed.
    import signal

    import httpx2
    from modelplug.testing import FakeModel, text
    from modelplug_gateway.app import Gateway
    from modelplug_gateway.key_gate import VirtualKeyGate
    from modelplug_gateway.settings import GatewaySettings
    from modelplug_redis.connection import Connection, StoreUnavailableError

    timeout = 1.0
    failed: list[str] = []
    run, script = Connection.run, Connection.script

    async def counted(method: Any, self: Connection, *args: Any) -> Any:
        try:
            return await method(self, *args)
        except StoreUnavailableError as exc:
            if "failed lately" not in exc.message:
                failed.append(exc.message)
            raise

    async def counted_run(self: Connection, *args: Any) -> Any:
        return await counted(run, self, *args)

    async def counted_script(self: Connection, *args: Any) -> Any:
        return await counted(script, self, *args)

    monkeypatch.setattr(Connection, "run", counted_run)
    monkeypatch.setattr(Connection, "script", counted_script)
    config = {
        "redis": {"url": redis_server.url, "timeout": timeout, "retry_interval": 0.01},
        "gateway": {"key_secret_env": "GW_SECRET"},
        "limits": {"budgets": {"tokens": {"tokens": 10**9, "period": "day"}}},
    }
    environ = {"MODELPLUG_DATA_DIR": str(tmp_path / "data"), "GW_SECRET": "x" * 32}
    # Each answer takes longer than retry_interval (two events, 0.05 s before each).
    fake = FakeModel([text(f"answer {i}") for i in range(5)], delay=0.05)
    client = Client(
        plugins=[fake],
        config=config,
        environ=environ,
        enable=["modelplug-gateway", "modelplug-limits", "modelplug-redis", "modelplug-fallback"],
    )
    key = create(client, "frozen", rpm=1000, tpm=10**6)
    gate = VirtualKeyGate.for_client(client)
    gate.fresh = 0.0  # every call looks its key up: one more Redis step per call
    app = Gateway(client, GatewaySettings(), gate)
    assert redis_server.process is not None
    pid = redis_server.process.pid

    async def scenario() -> tuple[list[tuple[int, str, float]], int]:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(
            transport=transport,
            base_url="http://gateway",
            headers={"authorization": f"Bearer {key}"},
            timeout=60,
        ) as http:

            async def call() -> tuple[int, str, float]:
                body = {"model": "fake/m", "messages": [{"role": "user", "content": "hi"}]}
                started = time.monotonic()
                answer = await http.post("/v1/chat/completions", json=body)
                took = time.monotonic() - started
                content = answer.json()["choices"][0]["message"]["content"]
                return answer.status_code, content, took

            await call()  # Redis answers: scripts loaded, connections made
            os.kill(pid, signal.SIGSTOP)
            try:
                frozen = [await call() for _ in range(4)]
                sent_and_failed = len(failed)
            finally:
                os.kill(pid, signal.SIGCONT)
        await client.aclose()
        return frozen, sent_and_failed

    frozen, sent_and_failed = asyncio.run(scenario())
    assert [(status, content) for status, content, _ in frozen] == [
        (200, f"answer {i}") for i in range(1, 5)
    ]
    # One command met the frozen server and waited its timeout; no other step of any call
    # waited (counted, not timed: a loaded machine stretches seconds, never the count).
    assert sent_and_failed == 1, failed
