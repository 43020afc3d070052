"""The limits policy's overhead per call: with its memory store, with this machine's
SQLite file (the default without Redis) and with Redis on loopback, against the same
call without the policy, all in one run; and the cost of one admission in Redis alone.

    python bench/limits.py [--calls 2000] [--repeat 3] [--without-hiredis]

Each call is a whole ``acomplete`` on a FakeModel (no network, so what is measured is
modelplug's own work): the baseline has no policy; "memory", "sqlite" and "redis" have the limits
policy with one rate limit (rpm and tpm) and one spend budget configured, so every call
reserves a request, its tokens and its maximum cost, and settles tokens and cost after.
Redis runs as a real redis-server on a free loopback port (skipped when not installed).
Printed: microseconds per call (wall time: a Redis round trip is waiting, not CPU), the
ratios against the baseline, and the Redis round trips per call (the target: at most 2
on the happy path, one reservation and one settlement). The fallback policy's own
cooldown check is one more round trip when its store is Redis too; it is not installed
here.

One admission is one reservation in the Redis counter store (``RedisCounters.reserve``:
one EVALSHA of the reserve script, the gateway's per-call admission), timed alone: one
after another (wall time, and this process's CPU time, which the waiting does not
count) and 64 at once (CPU time per admission: what a busy process pays). Printed as
min and median over the repeats. ``--without-hiredis`` hides hiredis from redis-py,
which then parses replies in Python: what hiredis buys.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from modelplug import Client
from modelplug.contract.types import Price, Usage
from modelplug.testing import FakeModel, text

LIMITS = {
    "bench/m": {"rpm": 10**9, "tpm": 10**12},
    "budgets": {"bench": {"spend": "1000000", "period": "day"}},
}
PRICE = Price(input=Decimal(1), output=Decimal(2))


def fake() -> FakeModel:
    answer = text("ok", usage=Usage(input=12, output=3))
    model = FakeModel(provider="bench", price=PRICE)
    model.steps = _Endless(answer)  # type: ignore[assignment]
    return model


class _Endless(list):  # type: ignore[type-arg]
    """A script that never runs out: the same answer for every call."""

    def __init__(self, answer: Any) -> None:
        super().__init__([answer])
        self.answer = answer

    def pop(self, index: int = -1) -> Any:
        return self.answer


def client_for(store: Any | None) -> Client:
    plugins: list[object] = [fake()]
    if store is not None:
        from modelplug_limits import LimitsPolicy

        plugins.append(LimitsPolicy(LIMITS, store=store))
    return Client(plugins=plugins, entry_points=False)


async def per_call(client: Client, calls: int) -> float:
    for _ in range(50):  # warm up: imports, first validations
        await client.acomplete("bench/m", "hello", max_tokens=64)
    started = time.perf_counter()
    for _ in range(calls):
        await client.acomplete("bench/m", "hello", max_tokens=64)
    return (time.perf_counter() - started) / calls * 1e6


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_redis() -> tuple[subprocess.Popen[bytes], str] | None:
    executable = shutil.which("redis-server")
    if executable is None:
        return None
    port = free_port()
    directory = tempfile.mkdtemp(prefix="modelplug-bench-redis-")
    process = subprocess.Popen(
        [executable, "--port", str(port), "--bind", "127.0.0.1", "--dir", directory,
         "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(500):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return process, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.02)
    process.kill()
    return None


ADMISSION = [("rate:bench:requests", 1, 10**9, 60.0), ("rate:bench:tokens", 76, 10**12, 60.0)]


async def per_admission(store: Any, admissions: int, at_once: int) -> tuple[float, float]:
    """Microseconds of wall time and of this process's CPU time per admission, with
    ``at_once`` reservations in flight together."""
    from modelplug_kit import Charge

    charges = [Charge(key, amount, limit, ttl=ttl) for key, amount, limit, ttl in ADMISSION]

    async def some(count: int) -> None:
        for _ in range(count):
            outcome = await store.reserve(charges)
            assert outcome.refused is None and not outcome.degraded, outcome

    await asyncio.gather(*(some(50) for _ in range(at_once)))  # warm up: connections, scripts
    each = max(1, admissions // at_once)
    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(some(each) for _ in range(at_once)))
    done = each * at_once
    return (
        (time.perf_counter() - wall) / done * 1e6,
        (time.process_time() - cpu) / done * 1e6,
    )


def parser_in_use() -> str:
    from redis.utils import HIREDIS_AVAILABLE

    return "redis-py parses with hiredis" if HIREDIS_AVAILABLE else "redis-py parses in Python"


async def redis_store(url: str) -> tuple[Any, Client]:
    from modelplug_redis import counter_store

    owner = Client(config={"redis": {"url": url, "timeout": 2.0}}, enable=["modelplug-redis"])
    store = counter_store(owner)
    assert store is not None
    return store, owner


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--without-hiredis", action="store_true", help="redis-py parses replies in Python"
    )
    args = parser.parse_args()
    if args.without_hiredis:
        sys.modules["hiredis"] = None  # type: ignore[assignment]  # import hiredis fails
    from modelplug_kit import MemoryCounters
    from modelplug_limits import SqliteCounters

    redis = start_redis()
    try:

        async def run() -> dict[str, list[float]]:
            results: dict[str, list[float]] = {"none": [], "memory": [], "sqlite": [], "redis": []}
            for name in ("one wall", "one cpu", "64 wall", "64 cpu"):
                results[name] = []
            store = owner = None
            if redis is not None:
                store, owner = await redis_store(redis[1])
            sqlite = SqliteCounters(Path(tempfile.mkdtemp(prefix="modelplug-bench-")) / "l.sqlite3")
            for _ in range(args.repeat):
                results["none"].append(await per_call(client_for(None), args.calls))
                results["memory"].append(await per_call(client_for(MemoryCounters()), args.calls))
                results["sqlite"].append(await per_call(client_for(sqlite), args.calls))
                if store is not None:
                    before = store.connection.round_trips
                    results["redis"].append(await per_call(client_for(store), args.calls))
                    trips = (store.connection.round_trips - before) / (args.calls + 50)
                    results["trips"] = [trips]
                    for at_once in (1, 64):
                        wall, cpu = await per_admission(store, args.calls, at_once)
                        results[f"{'one' if at_once == 1 else at_once} wall"].append(wall)
                        results[f"{'one' if at_once == 1 else at_once} cpu"].append(cpu)
            if owner is not None:
                await owner.aclose()
            return {name: values for name, values in results.items() if values}

        measured = asyncio.run(run())
        best = {name: min(values) for name, values in measured.items()}
    finally:
        if redis is not None:
            redis[0].terminate()
            redis[0].wait(timeout=10)
    print(f"calls: {args.calls} x {args.repeat} (best run), Python {sys.version.split()[0]}")
    print(f"  no policy            {best['none']:8.1f} us/call")
    print(
        f"  limits, memory store {best['memory']:8.1f} us/call  "
        f"{best['memory'] / best['none']:.2f}x"
    )
    print(
        f"  limits, sqlite store {best['sqlite']:8.1f} us/call  "
        f"{best['sqlite'] / best['none']:.2f}x  (this machine's file: two transactions per call)"
    )
    if "redis" in best:
        print(
            f"  limits, redis store  {best['redis']:8.1f} us/call  "
            f"{best['redis'] / best['none']:.2f}x  "
            f"({best['trips']:.2f} Redis round trips per call; target <= 2)"
        )
        import modelplug_redis

        where = Path(modelplug_redis.__file__).parent
        print(f"one admission in Redis (a reservation), {parser_in_use()}, code in {where}")
        for label, name in (
            ("one after another, wall", "one wall"),
            ("one after another, CPU ", "one cpu"),
            ("64 at once, wall       ", "64 wall"),
            ("64 at once, CPU        ", "64 cpu"),
        ):
            values = measured[name]
            print(
                f"  {label} min {min(values):7.1f}  median {statistics.median(values):7.1f}"
                " us/admission"
            )
    else:
        print("  limits, redis store  skipped (redis-server is not installed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
