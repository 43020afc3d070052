"""A virtual key with a budget admits what fits it from its first call on, however many
calls arrive at once: each reserves what it may cost at most (its model's known price,
its output cap), as ``modelplug gateway serve`` with four workers runs it, with keys made
by ``modelplug gateway keys create``, called through the openai SDK, on a real
redis-server and on the default SQLite store.

Before, a key's first call to a model was priced alone across the workers: 20 first calls
at once on a fresh key with 100 USD a day gave 1 answer and 19 refusals ("its first call
to this model is being priced"), and 24 calls on a key with 0.10 USD a day at 0.01 USD a
call gave 4 answers (10 fit).

The upstream is an OpenAI-compatible server on 127.0.0.1 answering every call with the
same 10 output tokens (``recordings/chat_ten_tokens.sse``); the model's price is set in
the operator's file at 1000 USD per million output tokens and nothing for input, so a
call capped at ``max_tokens: 10`` may cost, and costs, exactly 0.01 USD."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

HERE = Path(__file__).parent
RECORDING = b"".join(
    line
    for line in (HERE / "recordings" / "chat_ten_tokens.sse").read_bytes().splitlines(True)
    if not line.startswith(b"#")
)
WORKERS = 4
KEYS_CREATE = [sys.executable, "-m", "modelplug", "gateway", "keys", "create"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Upstream:
    """The OpenAI-compatible server the gateway calls; counts the calls it answered."""

    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                with upstream.lock:
                    upstream.calls += 1
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                self.wfile.write(RECORDING)

        ThreadingHTTPServer.request_queue_size = 128
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class RedisServer:
    """A redis-server on a free loopback port of its own, for the test."""

    def __init__(self, directory: Path) -> None:
        executable = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not os.path.exists(executable):
            if os.environ.get("CI"):
                pytest.fail("redis-server is not installed and CI is set")
            pytest.skip("redis-server is not installed (apt-get install redis-server)")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = subprocess.Popen(
            [
                executable,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--dir", str(directory),
                "--save", "",
                "--appendonly", "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


class Deployment:
    """One operator's gateway: the user file, the data directory, the keys CLI and
    ``modelplug gateway serve`` with four workers."""

    def __init__(self, home: Path, upstream: Upstream, redis_url: str | None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        redis = f'[redis]\nurl = "{redis_url}"\ntimeout = 5.0\n' if redis_url else ""
        user = home / "user.toml"
        user.write_text(
            textwrap.dedent(
                f"""
                [providers.up]
                type = "openai-compatible"
                base_url = "{upstream.url}"

                [models."up/m"]
                price = {{ input = 0, output = 1000 }}

                [gateway]
                port = {self.port}
                workers = {WORKERS}
                auth = "keys"
                key_secret_env = "GW_SECRET"
                shutdown_grace = 1
                """
            )
            + redis
        )
        os.chmod(user, 0o600)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
        self.env |= {
            "MODELPLUG_CONFIG": str(user),
            "MODELPLUG_DATA_DIR": str(home / "data"),
            "GW_SECRET": "one secret for every worker of this test",
        }
        self.home = home
        self.server: subprocess.Popen[bytes] | None = None

    def create(self, name: str, budget: str) -> str:
        done = subprocess.run(
            [*KEYS_CREATE, name, "--budget", budget, "--period", "day"],
            env=self.env,
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return next(word for word in done.stdout.split() if word.startswith("mpk-"))

    def serve(self) -> None:
        log = (self.home / "gateway.log").open("wb")
        self.server = subprocess.Popen(
            [sys.executable, "-m", "modelplug", "gateway", "serve"],
            env=self.env,
            cwd=self.home,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx2.get(f"{self.url}/health", timeout=1.0).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            if self.server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the gateway did not start: " + self.log())
            time.sleep(0.05)

    def log(self) -> str:
        return (self.home / "gateway.log").read_text(errors="replace")

    def stop(self) -> None:
        if self.server is not None:
            self.server.terminate()
            try:
                self.server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()

    def burst(self, key: str, calls: int) -> tuple[Counter[int], list[str]]:
        """``calls`` calls at once through the openai SDK: the statuses, and the
        messages of the refusals."""

        async def run() -> tuple[Counter[int], list[str]]:
            sdk = openai.AsyncOpenAI(
                base_url=f"{self.url}/v1", api_key=key, max_retries=0, timeout=60
            )
            statuses: Counter[int] = Counter()
            refusals: list[str] = []

            async def one() -> None:
                try:
                    await sdk.chat.completions.create(
                        model="up/m",
                        max_tokens=10,
                        messages=[{"role": "user", "content": "count to ten"}],
                    )
                    statuses[200] += 1
                except openai.APIStatusError as exc:
                    statuses[exc.status_code] += 1
                    refusals.append(exc.message)

            await asyncio.gather(*(one() for _ in range(calls)))
            await sdk.close()
            return statuses, refusals

        return asyncio.run(run())


@pytest.fixture(params=["redis", "sqlite"])
def deployment(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Deployment, Upstream]]:
    upstream = Upstream()
    redis = RedisServer(tmp_path) if request.param == "redis" else None
    made = Deployment(tmp_path, upstream, redis.url if redis else None)
    try:
        yield made, upstream
    finally:
        made.stop()
        upstream.close()
        if redis is not None:
            redis.stop()


def test_twenty_first_calls_at_once_on_a_fresh_budgeted_key_are_all_answered(
    deployment: tuple[Deployment, Upstream],
) -> None:
    gateway, upstream = deployment
    key = gateway.create("team", "100")
    gateway.serve()

    statuses, refusals = gateway.burst(key, 20)

    assert statuses == {200: 20}, (refusals[:3], gateway.log()[-2000:])
    assert upstream.calls == 20


def test_a_budget_admits_exactly_the_calls_that_fit_it_when_they_come_at_once(
    deployment: tuple[Deployment, Upstream],
) -> None:
    gateway, upstream = deployment
    key = gateway.create("small", "0.10")
    gateway.serve()

    statuses, refusals = gateway.burst(key, 24)
    after = gateway.burst(key, 1)

    # 0.10 USD a day at 0.01 USD a call: ten fit, whichever worker each one reached.
    assert statuses == {200: 10, 429: 14}, (refusals[:3], gateway.log()[-2000:])
    assert upstream.calls == 10
    assert after[0] == {429: 1}
    said = refusals[0]
    assert "key 'small' has a budget of 0.10 USD per day, " in said
    assert " USD spent or held for calls under way, " in said
    assert "may cost up to 0.01 USD (its output cap of 10 tokens" in said
    assert "it does not fit; it resets at " in said
