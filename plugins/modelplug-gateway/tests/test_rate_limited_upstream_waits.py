"""A gateway never holds a caller in silence for a rate limit: after an upstream answered
429 with ``Retry-After: 30``, the call is answered 429 with the Retry-After that remains,
at once, in the caller's shape, through the gateway that met the 429 and through another
gateway process sharing its stores (this machine's SQLite files); a wait within
``[gateway] max_wait`` is still made. The library, where nothing bounds the wait so
tightly, shows it as a Notice.

Before, the first call waited out the Retry-After twice (a minute) and a call through a
second gateway waited out the rest of the room the 429 closed before it was even sent,
both past the openai SDK's 10 s timeout with nothing sent back. Real processes: two
``modelplug gateway serve`` on one data directory, the official SDKs, and an
OpenAI-compatible upstream on 127.0.0.1."""

from __future__ import annotations

import json
import os
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

import anthropic
import httpx2
import openai
import pytest

HERE = Path(__file__).parent
ANSWER = b"".join(
    line
    for line in (HERE / "recordings" / "chat_ten_tokens.sse").read_bytes().splitlines(True)
    if not line.startswith(b"#")
)
# OpenAI's own 429 body (its rate-limit error as the openai SDK's tests shape it).
BUSY = json.dumps(
    {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
).encode()
SDK_TIMEOUT = 10.0  # the openai SDK's timeout in the report
SERVE = [sys.executable, "-m", "modelplug", "gateway", "serve", "--no-auth"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Upstream:
    """Answers 429 with the Retry-After its model's plan says, then 200: ``busy`` always
    asks for 30 s, ``brief`` for 1 s once, ``patient`` for 2 s once."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.lock = threading.Lock()
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                model = body["model"]
                with upstream.lock:
                    upstream.calls[model] += 1
                    seen = upstream.calls[model]
                asks = {"busy": "30", "brief": "1", "patient": "2"}[model]
                if model == "busy" or seen == 1:
                    self.send_response(429)
                    self.send_header("content-type", "application/json")
                    self.send_header("retry-after", asks)
                    self.end_headers()
                    self.wfile.write(BUSY)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                self.wfile.write(ANSWER)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class Machine:
    """One operator's machine: a user file naming the upstream, one data directory,
    and gateway processes started on it."""

    def __init__(self, home: Path, upstream: Upstream) -> None:
        user = home / "user.toml"
        user.write_text(
            textwrap.dedent(
                f"""
                [providers.up]
                type = "openai-compatible"
                base_url = "{upstream.url}"
                """
            )
        )
        os.chmod(user, 0o600)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG_")}
        self.env |= {"MODELPLUG_CONFIG": str(user), "MODELPLUG_DATA_DIR": str(home / "data")}
        self.home = home
        self.servers: list[subprocess.Popen[bytes]] = []

    def gateway(self) -> str:
        port = free_port()
        log = (self.home / f"gateway-{port}.log").open("wb")
        server = subprocess.Popen(
            [*SERVE, "--port", str(port)],
            env=self.env,
            cwd=self.home,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.servers.append(server)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx2.get(f"{url}/health", timeout=1.0).status_code == 200:
                    return url
            except httpx2.TransportError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the gateway did not start (exit {server.poll()})")
            time.sleep(0.05)

    def stop(self) -> None:
        for server in self.servers:
            server.terminate()
        for server in self.servers:
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


@pytest.fixture
def machine(tmp_path: Path) -> Iterator[tuple[Machine, Upstream]]:
    upstream = Upstream()
    made = Machine(tmp_path, upstream)
    try:
        yield made, upstream
    finally:
        made.stop()
        upstream.close()


def chat(url: str, model: str) -> openai.RateLimitError:
    sdk = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=SDK_TIMEOUT)
    with pytest.raises(openai.RateLimitError) as caught:
        sdk.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}])
    sdk.close()
    return caught.value


def test_a_429_with_retry_after_is_answered_at_once_by_every_gateway_sharing_the_stores(
    machine: tuple[Machine, Upstream],
) -> None:
    box, upstream = machine
    first_gateway = box.gateway()
    second_gateway = box.gateway()

    first = chat(first_gateway, "up/busy")  # the SDK's 10 s timeout raised before
    second = chat(second_gateway, "up/busy")
    messages = anthropic.Anthropic(
        base_url=second_gateway, api_key="unused", max_retries=0, timeout=SDK_TIMEOUT
    )
    with pytest.raises(anthropic.RateLimitError) as in_anthropic_shape:
        messages.messages.create(
            model="up/busy", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    messages.close()

    assert first.response.headers["retry-after"] == "30"  # what the upstream asked
    assert "Rate limit reached" in first.message
    # The second gateway sent nothing: the 429 closed the model's room in the store
    # both share, and it answers with what remains of it.
    assert upstream.calls["busy"] == 1
    for refused in (second, in_anthropic_shape.value):
        assert 1 <= int(refused.response.headers["retry-after"]) <= 30
        assert "the request limit up/busy's server reported has room in" in refused.message
        assert "longer than max_wait (5 s)" in refused.message
    assert in_anthropic_shape.value.body["type"] == "error"  # type: ignore[index]


def test_a_wait_within_max_wait_is_made_and_the_call_answered(
    machine: tuple[Machine, Upstream],
) -> None:
    box, upstream = machine
    gateway = box.gateway()
    sdk = openai.OpenAI(
        base_url=f"{gateway}/v1", api_key="unused", max_retries=0, timeout=SDK_TIMEOUT
    )

    answer = sdk.chat.completions.create(
        model="up/brief", messages=[{"role": "user", "content": "hi"}]
    )
    sdk.close()

    assert answer.choices[0].message.content == "one two three four five six seven eight nine ten"
    assert upstream.calls["brief"] == 2  # a 429 asking for 1 s, waited, then the answer


LIBRARY_CALL = r"""
import json, sys
from modelplug import Client
from modelplug.contract.types import Notice

seen = []
client = Client()
client.resolve("up/" + sys.argv[1])  # settings read, plugins loaded: ready to call
print("ready", flush=True)
sys.stdin.readline()
try:
    answer = client.complete(
        "up/" + sys.argv[1], "hi",
        on_event=lambda e: seen.append(e.model_dump(mode="json")) if isinstance(e, Notice) else None,
    )
    print(json.dumps({"text": answer.text, "notices": seen}))
except Exception as exc:
    print(json.dumps({"error": str(exc), "notices": seen}))
"""


def test_the_library_shows_the_wait_for_a_room_another_process_saw_closed_as_a_notice(
    machine: tuple[Machine, Upstream],
) -> None:
    box, upstream = machine
    (box.home / "user.toml").write_text(
        (box.home / "user.toml").read_text() + "\n[fallback]\nretries = 0\n"
    )

    def library(model: str) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-c", LIBRARY_CALL, model],
            env=box.env,
            cwd=box.home,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
        return process

    def result(process: subprocess.Popen[str]) -> dict[str, Any]:
        out, err = process.communicate("go\n", timeout=60)
        assert process.returncode == 0, err
        found: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return found

    # Both processes are ready before the first call, so the second calls a moment after
    # the 429 however slowly this machine starts a Python process.
    first, second = library("patient"), library("patient")
    failed = result(first)  # a 429 asking for 2 s; no retry here
    answered = result(second)  # another process: the room is still closed

    assert "429" in failed["error"]
    assert answered["text"] == "one two three four five six seven eight nine ten"
    waits = [n for n in answered["notices"] if n["kind"] == "wait"]
    assert len(waits) == 1 and 0 < waits[0]["delay"] <= 2.0
    assert "waiting" in waits[0]["message"]
    assert "the request limit up/patient's server reported" in waits[0]["message"]
    assert upstream.calls["patient"] == 2
