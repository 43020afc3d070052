"""Four real worker processes on one real redis-server balance as one: 100 streams held
open at once on a least-busy group of four deployments, the workers opening 10, 20, 30
and 40 of them, leave each deployment within 2 of the even share (25), as a fifth
process (``modelplug resolve GROUP --json``) reads the calls in flight from Redis.

The deployments are a provider in each worker's own process that holds every stream
open after its first text until the test lets them go (a file appears): what is shared
is the router's state in Redis, which is what is tested. Without redis-server the test
skips, unless CI is set: then it fails."""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("modelplug_redis", reason="the state is kept in Redis through it")

WORKER = r"""
import asyncio, json, pathlib, sys, time
from modelplug import Client, hookimpl
from modelplug.contract.types import (
    Done, Endpoint, Message, Provider, Response, Route, TextBlock, TextDelta, Usage,
)

spec = json.loads(sys.argv[1])
release = pathlib.Path(spec["release"])
NAMES = ["d0", "d1", "d2", "d3"]


class Held:
    @hookimpl
    def modelplug_providers(self):
        return [Provider(name=name, type="held") for name in NAMES]

    @hookimpl
    def modelplug_resolve(self, spec):
        provider, _, model = spec.partition("/")
        if provider not in NAMES:
            return None
        return Route(provider=provider, model=model, endpoint=Endpoint(type="held", local=True))

    @hookimpl
    def modelplug_stream(self, route, request):
        if route.endpoint.type != "held":
            return None
        return self.play(route)

    async def play(self, route):
        yield TextDelta(text="held")
        while not release.exists():
            await asyncio.sleep(0.01)
        message = Message(role="assistant", content=[TextBlock(text="done")])
        yield Done(response=Response(message=message, model=route.name, usage=Usage()))


client = Client(plugins=[Held()], config=spec["config"], enable=spec["enable"])


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

    async def rest(stream):
        model = None
        async for event in stream:
            if event.type == "done":
                model = event.response.model
        return model

    models = await asyncio.gather(*(rest(s) for s in streams))
    await client.aclose()
    return models


print(json.dumps(asyncio.run(main())))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    executable = shutil.which("redis-server")
    if executable is None:
        if os.environ.get("CI"):
            pytest.fail(
                "redis-server is not installed and CI is set (apt-get install redis-server)"
            )
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    process = subprocess.Popen(
        [executable, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path),
         "--save", "", "--appendonly", "no", "--loglevel", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while not ping(port):
        assert process.poll() is None and time.monotonic() < deadline, "redis-server failed"
        time.sleep(0.02)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_four_workers_on_redis_keep_least_busy_even(tmp_path: Path, redis_url: str) -> None:
    config = {
        "groups": {
            "g": {"deployments": ["d0/m", "d1/m", "d2/m", "d3/m"], "strategy": "least-busy"}
        },
        "redis": {"url": redis_url, "timeout": 5.0},
    }
    user = tmp_path / "config.toml"
    user.write_text(
        f'[redis]\nurl = "{redis_url}"\n\n[groups.g]\nstrategy = "least-busy"\n'
        'deployments = ["d0/m", "d1/m", "d2/m", "d3/m"]\n'
    )
    release = tmp_path / "release"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
    env["MODELPLUG_CONFIG"] = str(user)
    env["MODELPLUG_DATA_DIR"] = str(tmp_path / "data")
    enable = ["modelplug-router", "modelplug-redis"]
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WORKER,
                json.dumps(
                    {"config": config, "enable": enable, "release": str(release), "streams": n}
                ),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        for n in (10, 20, 30, 40)
    ]
    try:
        for worker in workers:
            assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
        start_at = math.ceil(time.time() + 0.3)
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write(f"{start_at}\n")
            worker.stdin.flush()
        for worker in workers:
            assert worker.stdout is not None
            line = worker.stdout.readline().strip()
            assert line == "open", line + (worker.stderr.read() if worker.stderr else "")

        # All 100 streams are open: a fifth process reads the calls in flight from Redis.
        shown = subprocess.run(
            [sys.executable, "-m", "modelplug", "resolve", "g", "--json"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
        )
        assert shown.returncode == 0, shown.stderr
        section = json.loads(shown.stdout)["policies"]["router"]
        in_flight = [d["in_flight"] for d in section["deployments"]]
        print(f"\ncalls in flight per deployment, 4 workers on one Redis: {in_flight}")
        assert section["store"] == "RedisCounters"
        assert sum(in_flight) == 100
        assert all(abs(n - 25) <= 2 for n in in_flight), in_flight
    finally:
        release.write_text("go")
        outputs = [worker.communicate(timeout=120) for worker in workers]
    models: Counter[str] = Counter()
    for worker, (stdout, stderr) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, stderr
        models.update(json.loads(stdout.strip().splitlines()[-1]))
    # Each stream ended on the deployment it was held on; the counts match Redis's.
    assert sorted(models) == ["d0/m", "d1/m", "d2/m", "d3/m"]
    assert sorted(models.values()) == sorted(in_flight)
