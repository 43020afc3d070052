"""A real redis-server for the tests: started on a free loopback port with its own
temporary directory, stopped after. Without redis-server the tests skip, unless the
environment variable CI is set: then a missing redis-server fails the run."""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

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
            # A server that asks for a password answers too, with NOAUTH.
            return sock.recv(16).startswith((b"+PONG", b"-NOAUTH"))
    except OSError:
        return False


class RedisServer:
    """One redis-server process: ``url``, ``kill()`` (SIGKILL, as a crash) and
    ``start()`` again on the same port and directory."""

    def __init__(self, executable: str, directory: Path, *extra: str) -> None:
        self.executable = executable
        self.directory = directory
        self.extra = extra  # more redis-server options (--requirepass ...)
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
                *self.extra,
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
def locked_redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A redis-server that asks for a password: ``secret-pw``."""
    server = RedisServer(
        redis_executable(), tmp_path_factory.mktemp("redis"), "--requirepass", "secret-pw"
    )
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


# -- several worker processes against one loopback server -------------------------

HERE = Path(__file__).parent
RECORDING = b"".join(
    line
    for line in (HERE / "recordings" / "chat_ok.sse").read_bytes().splitlines(keepends=True)
    if not line.startswith(b"#")
)
RATE_LIMIT_BODY = json.dumps(
    {"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded"}}
).encode()


class RateServer:
    """An OpenAI-compatible server on 127.0.0.1 that answers 429 beyond ``limit``
    requests per ``window`` seconds (windows aligned on the epoch, by arrival time).
    Requests for the model ``warm`` (the workers' warm-up) are answered, not counted."""

    def __init__(self, limit: int, window: float) -> None:
        self.limit = limit
        self.window = window
        self.seen: Counter[int] = Counter()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                which = int(time.time() // server.window)
                counted = json.loads(body or b"{}").get("model") != "warm"
                with server.lock:
                    server.seen[which] += counted
                    over = counted and server.seen[which] > server.limit
                if over:
                    self.send_response(429)
                    self.send_header("content-type", "application/json")
                    self.send_header("retry-after", f"{server.window:g}")
                    self.end_headers()
                    self.wfile.write(RATE_LIMIT_BODY)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                self.wfile.write(RECORDING)

        ThreadingHTTPServer.request_queue_size = 512  # 100 callers connect at once
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> RateServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def busiest(self) -> int:
        return max(self.seen.values(), default=0)


WORKER = r"""
import asyncio, json, sys, time
from modelplug import Client, ModelplugError
from modelplug.contract.types import Notice

spec = json.loads(sys.argv[1])
admitted = {}  # a request-rate window's key -> the calls the limiter let through in it

if spec["count_admissions"]:
    # The limiter's own accounting, watched where it meets the shared store: a
    # reservation taken counts in its window, one given back (its window ended during
    # the round trip, so the call goes in the next) counts out.
    from modelplug_redis.counters import RedisCounters

    def count(charges):
        for charge in charges:
            if charge.key.startswith("rate:") and ":requests:" in charge.key:
                admitted[charge.key] = admitted.get(charge.key, 0) + charge.amount

    reserve, settle = RedisCounters.reserve, RedisCounters.settle

    async def counted_reserve(self, charges):
        outcome = await reserve(self, charges)
        if outcome.refused is None:
            count(charges)
        return outcome

    async def counted_settle(self, adjust, learned):
        count(adjust)
        return await settle(self, adjust, learned)

    RedisCounters.reserve, RedisCounters.settle = counted_reserve, counted_settle

client = Client(config=spec["config"], enable=spec["enable"])
notices = []
problems = []

async def one():
    def seen(event):
        if isinstance(event, Notice):
            notices.append(event.kind)
            if event.kind == "limits":
                problems.append(event.message)
    try:
        await client.acomplete(spec["model"], "hi", max_tokens=spec["max_tokens"], on_event=seen)
        return "ok"
    except ModelplugError as exc:
        return type(exc).__name__ + ":" + str(getattr(exc, "kind", ""))

async def main():
    # One call before the start, to a model no limit counts: imports, the HTTP client,
    # the first connections are made now, not in the burst (where blocking the loop for
    # a second would delay every request past its window's edge).
    if spec["warm"]:
        await client.acomplete(spec["warm"], "warm up", max_tokens=1)
    print("ready", flush=True)
    start_at = float(sys.stdin.readline())
    await asyncio.sleep(max(0.0, start_at - time.time()))
    results = await asyncio.gather(*(one() for _ in range(spec["calls"])))
    await client.aclose()
    return results

results = asyncio.run(main())
print(json.dumps(
    {"results": results, "notices": notices, "problems": problems[:3], "admitted": admitted}
))
"""


def _run_workers(
    tmp_path: Path,
    config: dict[str, Any],
    enable: list[str],
    *,
    processes: int = 4,
    calls: int = 25,
    model: str = "lab/m",
    max_tokens: int = 16,
    warm: str | None = "lab/warm",
    count_admissions: bool = False,
) -> list[dict[str, Any]]:
    """Start ``processes`` workers, each making ``calls`` concurrent calls, all at once:
    each worker warms up (one call to ``warm``) and says it is ready, then they all get
    one start time, just after a whole second (rate windows are aligned on the epoch:
    a start late in a window would put the first burst right at its edge). Returns
    their results (``ok`` or the error's class and kind), notice kinds and problems;
    with ``count_admissions``, also ``admitted``: per request-rate window of the limiter
    (its counter's key), how many calls it let through in that window."""
    user_file = tmp_path / "user.toml"
    user_file.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
    env["MODELPLUG_CONFIG"] = str(user_file)
    spec = {
        "config": config,
        "enable": enable,
        "calls": calls,
        "model": model,
        "max_tokens": max_tokens,
        "warm": warm,
        "count_admissions": count_admissions,
    }
    started = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, json.dumps(spec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        for _ in range(processes)
    ]
    for process in started:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.strip() == "ready", line + (process.stderr.read() if process.stderr else "")
    start_at = math.ceil(time.time() + 0.2) + 0.02
    # Every worker has the start time before any is waited for (communicate() waits for
    # the end: handing it out there would start them one after another).
    for process in started:
        assert process.stdin is not None
        process.stdin.write(f"{start_at}\n")
        process.stdin.flush()
    out = []
    for process in started:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


@pytest.fixture
def run_workers(tmp_path: Path) -> Callable[..., list[dict[str, Any]]]:
    """``run_workers(config, enable, processes=4, calls=25)``: see :func:`_run_workers`."""

    def run(config: dict[str, Any], enable: list[str], **kwargs: Any) -> list[dict[str, Any]]:
        return _run_workers(tmp_path, config, enable, **kwargs)

    return run


@pytest.fixture
def rate_server() -> Iterator[Callable[[int, float], RateServer]]:
    """``rate_server(limit, window)``: a started RateServer, stopped after the test."""
    made: list[RateServer] = []

    def make(limit: int, window: float) -> RateServer:
        server = RateServer(limit, window).__enter__()
        made.append(server)
        return server

    yield make
    for server in made:
        server.__exit__()
