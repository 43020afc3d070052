"""modelplug-router's goals, measured in one run:

- **Picking's cost**: CPU time per call (``time.process_time``) of a whole ``acomplete``
  on a group of two FakeModel deployments, against the same call on one plain route,
  with the router's memory store and with this machine's SQLite file. Goal: the group
  adds <= 50 us of CPU a call (memory store).
- **weighted**: 10,000 calls on weights 1, 2 and 7: each deployment's share against its
  weight. Goal: within 3% of the weights.
- **least-busy**: 400 streams held open at once on four deployments: the calls in flight
  on each, against the even share (100). Goal: within 2. Then the same with four worker
  processes (100 streams each) on one real redis-server (skipped when redis-server is
  not installed), read from Redis by a fifth process (``modelplug resolve --json``).
- **One deployment of three refusing every call** (a 429 each time), 1,000 calls: the
  calls that failed (goal: none), with the fallback policy's cooldown (60 s) and with no
  cooldown at all (every pick of the refuser hands over).

    python bench/router.py [--calls 3000] [--repeat 3] [--only pick weighted ...]
    python bench/router.py --instructions [--calls 2000]

``--only`` runs some of the parts (pick, weighted, least-busy, redis, refusing).
``--instructions`` counts picking's cost in instructions under valgrind's callgrind
(repeatable where CPU time on a shared machine is not): each client runs in its own
process twice, 500 and then 500 + ``--calls`` calls; the difference over ``--calls`` is
one call's instructions, free of start-up costs.

Everything runs on FakeModels and in-process providers: no network beyond loopback Redis,
so what is measured is modelplug's own work.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

from modelplug import Client, hookimpl
from modelplug.contract.types import (
    Done,
    Endpoint,
    Message,
    Price,
    Provider,
    Response,
    Route,
    TextBlock,
    TextDelta,
    Usage,
)
from modelplug.testing import FakeModel, text
from modelplug_kit import MemoryCounters
from modelplug_router import RouterPolicy


class _Endless(list):  # type: ignore[type-arg]
    """A script that never runs out: the same step for every call."""

    def __init__(self, step: Any) -> None:
        super().__init__([step])
        self.step = step

    def pop(self, index: int = -1) -> Any:
        return self.step


PRICE = Price(input=Decimal(1), output=Decimal(2))


def endless(provider: str, step: Any = None) -> FakeModel:
    """A model answering every call, priced (as a hosted one is; a local one is free)."""
    model = FakeModel(provider=provider, price=PRICE)
    model.steps = _Endless(step or text("ok", usage=Usage(input=12, output=3)))  # type: ignore[assignment]
    return model


def group_client(names: list[str], store: Any, **group: Any) -> Client:
    deployments = group.pop("deployments", [f"{name}/m" for name in names])
    config = {"groups": {"g": {"deployments": deployments, **group}}, **group.pop("extra", {})}
    router = RouterPolicy(store=store, random=random.Random(0))
    plugins: list[object] = [endless(name) for name in names]
    return Client(plugins=[*plugins, router], entry_points=False, config=config)


async def cpu_per_call(client: Client, spec: str, calls: int) -> float:
    for _ in range(100):  # warm up: imports, first validations, the routes' caches
        await client.acomplete(spec, "hello", max_tokens=64)
    started = time.process_time()
    for _ in range(calls):
        await client.acomplete(spec, "hello", max_tokens=64)
    return (time.process_time() - started) / calls * 1e6


def picking_cost(calls: int, repeat: int) -> None:
    from modelplug_kit import SqliteCounters

    sqlite = SqliteCounters(Path(tempfile.mkdtemp(prefix="modelplug-bench-")) / "r.sqlite3")
    plain = Client(plugins=[endless("a")], entry_points=False)
    on_memory = group_client(["a", "b"], MemoryCounters())
    on_sqlite = group_client(["a", "b"], sqlite)

    async def run() -> dict[str, list[float]]:
        found: dict[str, list[float]] = {"plain": [], "memory": [], "sqlite": []}
        for _ in range(repeat):
            found["plain"].append(await cpu_per_call(plain, "a/m", calls))
            found["memory"].append(await cpu_per_call(on_memory, "g", calls))
            found["sqlite"].append(await cpu_per_call(on_sqlite, "g", calls))
        return found

    found = asyncio.run(run())
    base = min(found["plain"])
    print(f"picking's cost: CPU us per call, best of {repeat} x {calls} calls")
    print(f"  plain route a/m                 {base:8.1f}")
    for name in ("memory", "sqlite"):
        best = min(found[name])
        print(
            f"  group of 2 ({name} store){' ' * (7 - len(name))}      {best:8.1f}   "
            f"+{best - base:6.1f} us  ({best / base:.2f}x)"
        )
    added = min(found["memory"]) - base
    print(f"  goal <= 50 us added (memory store): {'met' if added <= 50 else 'MISSED'}")


def weighted_shares(calls: int) -> None:
    weights = {"a": 1, "b": 2, "c": 7}
    deployments = [{"spec": f"{n}/m", "weight": w} for n, w in weights.items()]
    client = group_client(list(weights), MemoryCounters(), deployments=deployments)

    async def run() -> Counter[str]:
        got: Counter[str] = Counter()
        for _ in range(calls):
            got[(await client.acomplete("g", "hi")).model or ""] += 1
        return got

    got = asyncio.run(run())
    total = sum(weights.values())
    print(f"weighted: {calls} calls on weights 1, 2, 7")
    worst = 0.0
    for name, weight in weights.items():
        share, want = got[f"{name}/m"] / calls, weight / total
        off = abs(share - want) / want
        worst = max(worst, off)
        print(f"  {name}/m  weight {weight}: {share:7.2%} of calls (weight's share {want:.2%}),"
              f" off by {off:.2%} of it")  # fmt: skip
    print(f"  goal within 3% of the weights: {'met' if worst <= 0.03 else 'MISSED'}")


class Held:
    """Deployments d0..d3 whose streams stay open after their first text until
    ``release`` is set."""

    NAMES = ("d0", "d1", "d2", "d3")

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.open: Counter[str] = Counter()

    @hookimpl
    def modelplug_providers(self) -> list[Provider]:
        return [Provider(name=name, type="held") for name in self.NAMES]

    @hookimpl
    def modelplug_resolve(self, spec: str) -> Route | None:
        provider, _, model = spec.partition("/")
        if provider not in self.NAMES:
            return None
        return Route(provider=provider, model=model, endpoint=Endpoint(type="held", local=True))

    @hookimpl
    def modelplug_stream(self, route: Route) -> Any:
        return self.play(route) if route.endpoint.type == "held" else None

    async def play(self, route: Route) -> Any:
        self.open[route.provider] += 1
        try:
            yield TextDelta(text="held")
            await self.release.wait()
            message = Message(role="assistant", content=[TextBlock(text="done")])
            yield Done(response=Response(message=message, model=route.name, usage=Usage()))
        finally:
            self.open[route.provider] -= 1


def least_busy_here(streams: int) -> None:
    held = Held()
    config = {
        "groups": {"g": {"deployments": [f"{n}/m" for n in Held.NAMES], "strategy": "least-busy"}}
    }
    router = RouterPolicy(store=MemoryCounters(), random=random.Random(0))
    client = Client(plugins=[held, router], entry_points=False, config=config)

    async def run() -> list[int]:
        opened = [client.astream("g", "hi") for _ in range(streams)]

        async def first_text(stream: Any) -> None:
            async for event in stream:
                if event.type == "text_delta":
                    return

        await asyncio.gather(*(first_text(s) for s in opened))
        counts = [held.open[name] for name in Held.NAMES]
        held.release.set()
        for stream in opened:
            async for _ in stream:
                pass
        return counts

    counts = asyncio.run(run())
    share = streams // len(Held.NAMES)
    worst = max(abs(n - share) for n in counts)
    print(f"least-busy: {streams} streams held open on 4 deployments, one process")
    print(f"  in flight {counts}, even share {share}, furthest off by {worst}"
          f" (goal within 2: {'met' if worst <= 2 else 'MISSED'})")  # fmt: skip


WORKER = r"""
import asyncio, json, pathlib, sys, time
sys.path.insert(0, sys.argv[2])
from router import Held
from modelplug import Client

spec = json.loads(sys.argv[1])
release = pathlib.Path(spec["release"])
held = Held()
enable = ["modelplug-router", "modelplug-redis"]
client = Client(plugins=[held], config=spec["config"], enable=enable)

async def main():
    print("ready", flush=True)
    start_at = float(sys.stdin.readline())
    await asyncio.sleep(max(0.0, start_at - time.time()))
    streams = [client.astream("g", "hi") for _ in range(spec["streams"])]
    async def first_text(stream):
        async for event in stream:
            if event.type == "text_delta":
                return
    await asyncio.gather(*(first_text(s) for s in streams))
    print("open", flush=True)
    while not release.exists():
        await asyncio.sleep(0.01)
    held.release.set()
    for stream in streams:
        async for _ in stream:
            pass
    await client.aclose()

asyncio.run(main())
"""


def least_busy_on_redis(workers: int, streams: int) -> None:
    executable = shutil.which("redis-server")
    if executable is None:
        print("least-busy on redis: skipped (redis-server is not installed)")
        return
    directory = Path(tempfile.mkdtemp(prefix="modelplug-bench-router-"))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    redis = subprocess.Popen(
        [executable, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory),
         "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    deployments = json.dumps([f"{n}/m" for n in Held.NAMES])
    user = directory / "config.toml"
    user.write_text(
        f'[redis]\nurl = "{url}"\n\n[groups.g]\nstrategy = "least-busy"\n'
        f"deployments = {deployments}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
    env["MODELPLUG_CONFIG"] = str(user)
    env["MODELPLUG_DATA_DIR"] = str(directory / "data")
    release = directory / "release"
    config = {"redis": {"url": url, "timeout": 5.0}}
    here = str(Path(__file__).resolve().parent)
    time.sleep(0.3)  # redis-server listening
    started = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WORKER,
                json.dumps({"config": config, "release": str(release), "streams": streams}),
                here,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=directory,
        )
        for _ in range(workers)
    ]
    try:
        for worker in started:
            assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
        start_at = math.ceil(time.time() + 0.3)
        for worker in started:
            assert worker.stdin is not None
            worker.stdin.write(f"{start_at}\n")
            worker.stdin.flush()
        for worker in started:
            assert worker.stdout is not None and worker.stdout.readline().strip() == "open"
        shown = subprocess.run(
            [sys.executable, "-m", "modelplug", "resolve", "g", "--json"],
            capture_output=True,
            text=True,
            env=env,
            cwd=directory,
            check=True,
        )
        section = json.loads(shown.stdout)["policies"]["router"]
        counts = [d["in_flight"] for d in section["deployments"]]
    finally:
        release.write_text("go")
        for worker in started:
            worker.communicate(timeout=120)
        redis.terminate()
        redis.wait(timeout=10)
    share = workers * streams // len(Held.NAMES)
    worst = max(abs(n - share) for n in counts)
    print(f"least-busy: {workers} worker processes x {streams} streams on one redis-server "
          f"({section['store']})")  # fmt: skip
    print(f"  in flight {counts}, even share {share}, furthest off by {worst}"
          f" (goal within 2: {'met' if worst <= 2 else 'MISSED'})")  # fmt: skip


class RateLimited(Exception):
    """What an SDK's 429 looks like to core's generic classifier."""

    def __init__(self) -> None:
        super().__init__("Too Many Requests")
        self.status_code = 429
        self.headers: dict[str, str] = {}


def one_refusing(calls: int) -> None:
    print(f"one deployment of three refusing every call (429), {calls} calls")
    for cooldown in (60, 0):
        refuser = FakeModel(provider="refuser")
        refuser.steps = _Endless(RateLimited())  # type: ignore[assignment]
        router = RouterPolicy(store=MemoryCounters(), random=random.Random(0))
        config = {
            "groups": {"g": {"deployments": ["refuser/m", "a/m", "b/m"]}},
            "fallback": {"cooldown_rate_limit": cooldown},  # read by the router too
        }
        client = Client(
            plugins=[refuser, endless("a"), endless("b"), router],
            entry_points=False,
            config=config,
        )

        async def run(client: Client = client) -> Counter[str]:
            got: Counter[str] = Counter()
            for _ in range(calls):
                try:
                    got[(await client.acomplete("g", "hi")).model or ""] += 1
                except Exception as exc:  # counted: the goal is none
                    got[f"failed: {type(exc).__name__}"] += 1
            return got

        got = asyncio.run(run())
        failed = sum(n for name, n in got.items() if name.startswith("failed"))
        print(f"  cooldown {cooldown:>2} s: answered {dict(sorted(got.items()))}, "
              f"refuser asked {len(refuser.requests)} times, failed calls {failed}"
              f" (goal none: {'met' if failed == 0 else 'MISSED'})")  # fmt: skip


CALLER = """
import asyncio, sys
sys.path.insert(0, {here!r})
import router as b
which, calls = sys.argv[1], int(sys.argv[2])
if which == "plain":
    client, spec = b.Client(plugins=[b.endless("a")], entry_points=False), "a/m"
else:
    client, spec = b.group_client(["a", "b"], b.MemoryCounters()), "g"

async def run():
    for _ in range(calls):
        await client.acomplete(spec, "hello", max_tokens=64)

asyncio.run(run())
"""


def picking_instructions(calls: int) -> None:
    """Picking's cost in instructions (callgrind): a group of 2 on the memory store
    against the plain route, per call."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from callgrind import count_instructions, have_valgrind

    if not have_valgrind():
        print("picking's instructions: valgrind is not installed, nothing counted")
        return
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "caller.py"
        script.write_text(CALLER.format(here=str(Path(__file__).resolve().parent)))
        per_call = {}
        for which in ("plain", "group"):
            counts = [
                count_instructions([sys.executable, str(script), which, str(n)])
                for n in (500, 500 + calls)
            ]
            per_call[which] = (counts[1] - counts[0]) / calls
    plain, group = per_call["plain"], per_call["group"]
    print(f"picking's cost: instructions per call (callgrind, {calls} calls past 500)")
    print(f"  plain route a/m                 {plain:10,.0f}")
    print(f"  group of 2 (memory store)       {group:10,.0f}   "
          f"+{group - plain:8,.0f}  ({group / plain:.2f}x)")  # fmt: skip


PARTS = ("pick", "weighted", "least-busy", "redis", "refusing")


def main() -> int:
    # [fallback] cooldown_rate_limit is read by the router; modelplug-fallback (whose
    # table it is) is not installed here.
    warnings.filterwarnings("ignore", r"unknown settings section \[fallback\]")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count picking's instructions per call under callgrind (nothing else runs)",
    )
    args = parser.parse_args()
    if args.instructions:
        picking_instructions(args.calls)
        return 0
    if "pick" in args.only:
        picking_cost(args.calls, args.repeat)
    if "weighted" in args.only:
        weighted_shares(10_000)
    if "least-busy" in args.only:
        least_busy_here(400)
    if "redis" in args.only:
        least_busy_on_redis(4, 100)
    if "refusing" in args.only:
        one_refusing(1000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
