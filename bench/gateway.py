"""The gateway in front of a loopback upstream, beside LiteLLM's proxy and Portkey's
open-source gateway in front of the same upstream, in one run, each on a CPU of its own;
and, with ``--modes auth,flood``, the gateway with virtual keys and limits on a real
redis-server.

    python bench/gateway.py [--seconds 5] [--rss-requests 20000] [--warm 2000]
        [--servers uvicorn,granian] [--litellm PATH] [--portkey PATH] [--pin auto|on|off]
    python bench/gateway.py --modes auth,flood [--seconds 3] [--rounds 3]
        [--flood-shapes bursts,even] [--flood-targets keys,relay]
    python bench/gateway.py --modes shapes [--seconds 5] [--rounds 3] [--warm 2000]

The peers are never project dependencies and are found where docs/contributing.md
installs them (skipped, saying so, when absent): LiteLLM's ``litellm`` command in
``bench/.peers`` (``--litellm``) and Portkey's ``@portkey-ai/gateway`` (version
:data:`PORTKEY_VERSION`, with the hono packages its own lockfile pins) in ``bench/.node``,
run with the machine's ``node`` (``--portkey``: its ``build/start-server.js``).

Processes: the upstream (a minimal asyncio HTTP/1.1 server answering Chat Completions,
JSON or a 5-chunk SSE stream, keep-alive; far cheaper than any proxy), the proxy being
measured (one worker or process each, no key: ``modelplug gateway serve --no-auth`` on
uvicorn and on granian, ``litellm --num_workers 1`` without a master key, Portkey's
``start-server.js --headless`` with an ``openai`` provider at the upstream as a custom
host, named in each call's ``x-portkey-provider`` and ``x-portkey-custom-host``
headers), and this one, the load generator (httpx2, asyncio).

``--pin`` (``auto``: on wherever there are two CPUs or more) runs each served process
(the proxies, the relay, the keys gateways) on the first CPU, as ``taskset -c 0`` would,
and this load generator, the flood's sender, the upstream and redis-server on the
others: a proxy's figures are its own work, not its fight for a CPU with its load. In
``compare`` the proxies run one at a time, each started, warmed with ``--warm`` calls,
measured and stopped before the next, so none shares its CPU with an idle neighbour.

``compare`` (the default) prints a column per proxy (the bare relay first, then the
gateway on each of ``--servers``, LiteLLM, Portkey):

- added latency (the proxy minus the upstream alone, measured just before it), p50 and
  p99, at a fixed 100 requests/s, streamed and plain;
- time to first byte of a streamed answer, minus the upstream's own;
- CPU per call at 100 req/s, streamed and plain: the proxy's processes' user + system
  time (``/proc``, clock ticks of 10 ms: about 20 us a call at 5 s) over the phase;
- requests/s with 64 concurrent streamed clients, and the CPU per call there;
- the proxy's RSS growth over ``--rss-requests`` calls (after everything above), and
  its RSS then;

then each gateway column against issue 44's goals (added p50 <= 1 ms and p99 <= 5 ms,
CPU per streamed call <= 1/5 of LiteLLM's and below Portkey's, >= 5x LiteLLM's req/s,
RSS growth <= 5 MB), met or MISSED with its figure, and the row as JSON.

``auth`` starts a redis-server of its own (no persistence, a free loopback port), makes
one key (``modelplug gateway keys create`` with an rpm, a tpm and a budget no call
reaches) and runs three gateways on the first of ``--servers``: open (``--no-auth``),
keys (``[gateway] auth = "keys"``, ``[redis] url``, modelplug-limits and modelplug-redis
on, as deployed) and gate (the same without modelplug-limits' policy in the Client: the
key gate alone). Printed: req/s at 64 concurrent clients of each, in alternating rounds,
and the Redis round trips per call each keyed gateway made, as redis-server counts them
(socket reads processed, and EVALSHA calls: the limits scripts), with usage that never
changes (a settlement with nothing to correct) and with usage that changes every call.

``flood`` measures valid calls at 100 req/s on the keys gateway (one on each of
``--servers``), alone and while another process sends 1,000 requests/s of new made-up
keys (raw keep-alive sockets, 16 lanes), in alternating rounds: p50, p99 and their
ratios; and the flooded server's CPU per wrong key. Each of ``--flood-shapes``:
``bursts``, the lanes in step (16 keys at once, 62.5 times a second), and ``even``, the
lanes staggered (a key every millisecond). Unpinned on two CPUs, a flood's sender shares
cores with the gateway and with the valid calls' own client, upstream and Redis, and
where the scheduler puts each wake-up moves the result more than the gateway's work
does (see docs/performance.md for both).

``shapes`` measures, in one run, what ``/v1/responses`` adds beside what
``/v1/chat/completions`` adds: the gateway on the first of ``--servers`` in front of the
same Chat Completions upstream, each path's added latency (the gateway minus the
upstream alone, measured just before it) at 100 requests/s, plain and streamed, p50 and
p99, and the gateway's CPU per call; ``--rounds`` rounds, the two paths' order swapped
each round, medians over the rounds. Printed: both, their ratio, and issue 46's goal
(``/v1/responses`` adds no more than ``/v1/chat/completions``) met or MISSED.

``compare`` and ``flood`` also measure a bare relay, the floor (``RELAY``): an ASGI app on uvicorn
with the gateway's settings that parses nothing, relays the upstream's bytes and
refuses a wrong key with a fixed 401. ``compare`` gives it a column (the first);
``flood`` floods it the same way after the gateway. What it adds is what the machine and
the server cost before any gateway work: the part of a target no gateway code can win
back. The flood target ``elsewhere`` is a control: valid calls to the keys gateway while
the same flood goes to the relay, the machine as loaded, the gateway untouched (with
``--pin off``; pinned, the relay is a served process on the gateway's CPU).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib.util
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

UPSTREAM = r"""
import asyncio, json, sys
CHUNK = lambda d, f: ("data: " + json.dumps({"id": "c", "object": "chat.completion.chunk",
    "created": 1, "model": "m", "choices": [{"index": 0, "delta": d, "finish_reason": f}]})
    + "\n\n").encode()
def answers(output):
    usage = {"prompt_tokens": 5, "completion_tokens": output, "total_tokens": 5 + output}
    sse = (CHUNK({"role": "assistant", "content": ""}, None)
        + b"".join(CHUNK({"content": w}, None) for w in ["Hello", " from", " the", " upstream"])
        + CHUNK({}, "stop") + ("data: " + json.dumps({"id": "c", "object":
        "chat.completion.chunk", "created": 1, "model": "m", "choices": [], "usage": usage})
        + "\n\n").encode() + b"data: [DONE]\n\n")
    plain = json.dumps({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content":
        "Hello from the upstream"}, "finish_reason": "stop"}], "usage": usage}).encode()
    return (head("application/json", len(plain)) + plain,
            head("text/event-stream", len(sse)) + sse)
def head(kind, n):
    return (f"HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {n}\r\n\r\n").encode()
# A request whose text says "vary" gets 4 or 5 output tokens in turn (a settlement with
# something to correct every time); any other, always 4.
SAME = answers(4)
VARY = (SAME, answers(5))
turn = 0
async def handle(reader, writer):
    global turn
    try:
        while True:
            headers = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in headers.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            body = await reader.readexactly(length) if length else b""
            pair = SAME
            if b"vary" in body:
                turn += 1
                pair = VARY[turn % 2]
            writer.write(pair[b'"stream": true' in body or b'"stream":true' in body])
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()
async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", int(sys.argv[1]), backlog=1024)
    async with server:
        await server.serve_forever()
try:
    import uvloop; uvloop.run(main())
except ImportError:
    asyncio.run(main())
"""

# The floor: an ASGI app on the gateway's own server settings (uvicorn, httptools, uvloop,
# one worker, no access log) that parses nothing and relays the upstream's bytes as they
# come, over kept-alive raw connections; a request whose authorization is not the one
# it was given is refused with a fixed 401 before its body is read. What any Python ASGI
# gateway costs on this machine before it does any work of its own. It knows only this
# bench's upstream (answers with a content-length).
RELAY = r"""
import asyncio, sys, uvicorn
UP, GOOD = int(sys.argv[2]), ("Bearer " + sys.argv[3]).encode()
REFUSED = b'{"error":{"message":"the key presented is not valid","type":"invalid_request_error"}}'
idle = []
async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    for name, value in scope["headers"]:
        if name == b"authorization" and value != GOOD:
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(REFUSED)).encode())]})
            await send({"type": "http.response.body", "body": REFUSED})
            return
    if scope["path"] == "/health":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    reader, writer = idle.pop() if idle else await asyncio.open_connection("127.0.0.1", UP)
    writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nhost: upstream\r\n"
        b"content-type: application/json\r\ncontent-length: "
        + str(len(body)).encode() + b"\r\n\r\n" + body)
    head = await reader.readuntil(b"\r\n\r\n")
    left, kind = 0, b"application/json"
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            left = int(value)
        elif name.lower() == b"content-type":
            kind = value.strip()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]})
    while left:
        data = await reader.read(min(left, 65536))
        left -= len(data)
        await send({"type": "http.response.body", "body": data, "more_body": left > 0})
    idle.append((reader, writer))
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), loop="uvloop", http="httptools",
    access_log=False, log_level="warning", lifespan="on")
"""
RELAY_KEY = "bench-relay-key"  # the one key the relay lets through


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# The CPUs a served process (a gateway, the relay, LiteLLM) runs on with --pin; None: the
# scheduler places every process anywhere.
SERVED_CPUS: set[int] | None = None


def served() -> dict[str, Any]:
    """Popen's arguments for a served process: on :data:`SERVED_CPUS` when pinned."""
    cpus = SERVED_CPUS
    if cpus is None:
        return {}
    return {"preexec_fn": lambda: os.sched_setaffinity(0, cpus)}


def pin(parser: argparse.ArgumentParser, asked: bool) -> None:
    """Served processes on the first CPU, this one and every other it starts (the
    upstream, redis-server, the flood's sender) on the rest. ``asked``: ``--pin on``
    (with one CPU an error; ``auto`` then goes on unpinned)."""
    global SERVED_CPUS
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        if asked:
            parser.error("--pin on needs two CPUs or more")
        print("not pinned: this process may run on one CPU only")
        return
    SERVED_CPUS = {cpus[0]}
    os.sched_setaffinity(0, set(cpus[1:]))
    rest = ",".join(map(str, cpus[1:]))
    print(
        f"pinned: served processes on CPU {cpus[0]}; the load generator, the flood's "
        f"sender, the upstream and redis-server on CPU {rest}"
    )


def start_relay(
    upstream_url: str, key: str = RELAY_KEY, port: int | None = None
) -> tuple[str, subprocess.Popen[bytes]]:
    """The bare relay (:data:`RELAY`) in front of the upstream: (its URL, its process)."""
    port = port or free_port()
    process = subprocess.Popen(
        [sys.executable, "-c", RELAY, str(port), upstream_url.rsplit(":", 1)[1], key],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        **served(),
    )
    return f"http://127.0.0.1:{port}", process


def wait_up(url: str, timeout: float = 60.0) -> None:
    import httpx2

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx2.get(url, timeout=1)
            return
        except httpx2.TransportError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


def family(pid: int) -> list[int]:
    """``pid`` and every process below it (a proxy's workers or helpers count as its own)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, left = [], [pid]
    while left:
        found.append(left.pop())
        left += children.get(found[-1], [])
    return found


def rss_kb(pid: int) -> int:
    """Resident memory of ``pid`` and the processes below it, in KiB."""
    total = 0
    for member in family(pid):
        try:
            lines = Path(f"/proc/{member}/status").read_text().splitlines()
        except OSError:
            continue
        total += sum(int(line.split()[1]) for line in lines if line.startswith("VmRSS:"))
    return total


def family_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and the processes below it."""
    total = 0.0
    for member in family(pid):
        try:
            total += cpu_seconds(member)
        except OSError:
            continue
    return total


def stop(process: subprocess.Popen[Any]) -> None:
    """SIGTERM to ``process`` and what it started, SIGKILL after 10 s."""
    members = family(process.pid)
    for member in members:
        try:
            os.kill(member, signal.SIGTERM)
        except ProcessLookupError:
            pass
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    for member in members[1:]:
        try:
            os.kill(member, signal.SIGKILL)
        except ProcessLookupError:
            pass


def body(stream: bool, text: str = "hi", responses: bool = False) -> dict[str, object]:
    """A call's body: Chat Completions, or the Responses API's (``responses``)."""
    if responses:
        return {"model": "up/m", "input": text, "stream": stream}
    return {"model": "up/m", "messages": [{"role": "user", "content": text}], "stream": stream}


async def one(client: object, url: str, stream: bool, text: str = "hi") -> tuple[float, float]:
    """(seconds to the last byte, seconds to the first body byte); a URL of the
    Responses API gets its body."""
    started = time.perf_counter()
    first = 0.0
    sent = body(stream, text, responses=url.endswith(RESPONSES))
    async with client.stream("POST", url, json=sent) as answer:  # type: ignore[attr-defined]
        if answer.status_code != 200:
            said = (await answer.aread())[:500].decode(errors="replace")
            raise RuntimeError(f"{url}: {answer.status_code} {said}")
        async for _ in answer.aiter_raw():
            if not first:
                first = time.perf_counter() - started
    return time.perf_counter() - started, first


WARM_CALLS = 20  # one after another before a fixed-rate load: the pool's connections


async def fixed_rate(
    url: str,
    stream: bool,
    seconds: float,
    rate: float = 100.0,
    headers: dict[str, str] | None = None,
) -> list[tuple[float, float]]:
    import httpx2

    results: list[tuple[float, float]] = []
    async with httpx2.AsyncClient(
        limits=httpx2.Limits(max_connections=64), timeout=120, headers=headers
    ) as client:
        for _ in range(WARM_CALLS):  # fill the pool
            await one(client, url, stream)
        tasks = []
        start = time.perf_counter()
        for n in range(int(seconds * rate)):
            delay = start + n / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.ensure_future(one(client, url, stream)))
        results = list(await asyncio.gather(*tasks))
    return results


async def throughput(
    url: str,
    seconds: float,
    clients: int = 64,
    *,
    stream: bool = True,
    headers: dict[str, str] | None = None,
    text: str = "hi",
) -> tuple[float, int]:
    """(requests/s, requests done) with ``clients`` callers back to back."""
    import httpx2

    done = 0
    async with httpx2.AsyncClient(
        limits=httpx2.Limits(max_connections=clients), timeout=120, headers=headers
    ) as client:
        end = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal done
            while time.perf_counter() < end:
                await one(client, url, stream, text)
                done += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        return done / (time.perf_counter() - started), done


async def many(url: str, count: int, headers: dict[str, str] | None = None) -> None:
    """``count`` calls, half streamed, from 16 callers back to back."""
    import httpx2

    async with httpx2.AsyncClient(
        limits=httpx2.Limits(max_connections=16), timeout=60, headers=headers
    ) as client:
        left = count

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                await one(client, url, left % 2 == 0)

        await asyncio.gather(*(worker() for _ in range(16)))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# -- virtual keys: a real redis-server, the keys gateway ------------------------------


class RedisServer:
    """A redis-server of the bench's own on a free loopback port (no persistence)."""

    def __init__(self, work: Path) -> None:
        executable = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(executable).exists():
            raise SystemExit("redis-server is not installed (apt-get install redis-server)")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = subprocess.Popen(
            [
                executable,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--dir", str(work),
                "--save", "",
                "--appendonly", "no",
                "--loglevel", "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while True:
            try:
                if self.info("server"):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)

    def info(self, section: str) -> dict[str, str]:
        """``INFO section`` as name -> value (one connection, inline protocol)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
            sock.sendall(f"INFO {section}\r\n".encode())
            data = b""
            while b"\r\n" not in data:
                data += sock.recv(65536)
            size, _, rest = data.partition(b"\r\n")
            while len(rest) < int(size[1:]):
                rest += sock.recv(65536)
        found = {}
        for line in rest.decode().splitlines():
            name, sep, value = line.partition(":")
            if sep:
                found[name] = value
        return found

    def counts(self) -> tuple[int, int, int]:
        """(socket reads processed: the requests clients sent, one per round trip;
        EVALSHA calls: the limits scripts, a reservation or a settlement each;
        connections accepted: a new one costs a few round trips of setup). Two INFO
        commands, each on a connection of its own: 2 reads and 2 connections of the
        difference between two counts are the counting's own."""
        stats = self.info("stats")
        evalsha = self.info("commandstats").get("cmdstat_evalsha", "calls=0")
        return (
            int(stats["total_reads_processed"]),
            int(evalsha.split(",")[0].split("=")[1]),
            int(stats["total_connections_received"]),
        )


class KeysGateways:
    """``modelplug gateway serve`` with ``[gateway] auth = "keys"`` and modelplug-redis
    on ``redis_url``, and one key (printed once) with an rpm, a tpm and a budget none of
    the bench's calls reaches. ``start(policy=True)`` also enables modelplug-limits's
    policy in the gateway's Client (as a deployment has it); ``policy=False`` leaves the
    key gate alone on Redis (it uses modelplug-limits' stores either way)."""

    def __init__(self, work: Path, upstream_url: str, redis_url: str) -> None:
        self.work = work
        config = work / "keys.toml"
        config.write_text(
            textwrap.dedent(
                f"""
                [providers.up]
                type = "openai-compatible"
                base_url = "{upstream_url}/v1"

                [models."up/m"]
                price = {{ input = 1, output = 1 }}

                [gateway]
                auth = "keys"
                key_secret_env = "BENCH_GATEWAY_SECRET"

                [redis]
                url = "{redis_url}"
                """
            )
        )
        os.chmod(config, 0o600)
        self.env = {
            **os.environ,
            "MODELPLUG_CONFIG": str(config),
            "MODELPLUG_DATA_DIR": str(work / "keys-data"),
            "BENCH_GATEWAY_SECRET": "the bench's secret, the same for every worker",
        }
        made = subprocess.run(
            [
                sys.executable, "-m", "modelplug", "gateway", "keys", "create", "bench",
                "--rpm", "100000000", "--tpm", "100000000000",
                "--budget", "1000000", "--period", "day",
            ],
            env={**self.env, "MODELPLUG_PLUGINS": self.plugins(True)},
            cwd=work,
            capture_output=True,
            text=True,
            check=True,
        )  # fmt: skip
        self.key = made.stdout.split()[0]

    @staticmethod
    def plugins(policy: bool) -> str:
        limits = ",modelplug-limits" if policy else ""
        return f"modelplug-openai-compat,modelplug-gateway,modelplug-redis{limits}"

    def start(
        self, port: int, *, policy: bool, server: str = "uvicorn"
    ) -> tuple[subprocess.Popen[bytes], Path]:
        log = self.work / f"keys-gateway-{port}.log"
        serve = ["gateway", "serve", "--port", str(port), "--server", server]
        gateway = subprocess.Popen(
            [sys.executable, "-m", "modelplug", *serve],
            env={**self.env, "MODELPLUG_PLUGINS": self.plugins(policy)},
            cwd=self.work,
            stdout=subprocess.DEVNULL,
            # The request log's lines and any warning (Redis unavailable): a file.
            stderr=log.open("wb"),
            **served(),
        )
        return gateway, log


def keys_name(server: str) -> str:
    """The keys gateway's name on ``server`` ("keys" on uvicorn)."""
    return "keys" if server == "uvicorn" else f"keys/{server}"


def degraded_count(url: str) -> int:
    """The keys gateway's ``modelplug_gateway_store_degraded_total``: calls that went on
    without Redis (a round-trip count means nothing unless this stayed put)."""
    import httpx2

    for line in httpx2.get(url + "/metrics").text.splitlines():
        if line.startswith("modelplug_gateway_store_degraded_total "):
            return int(float(line.split()[1]))
    return 0


def auth_and_limits(
    urls: dict[str, str], key: str, redis: RedisServer, seconds: float, rounds: int
) -> None:
    """req/s of the open gateway (``urls["open"]``) against the keys gateways (auth, rpm,
    tpm, budget on Redis; with the limits policy and without) in alternating rounds, and
    the Redis round trips per call each keys gateway made, counted by redis-server."""
    chat = "/v1/chat/completions"
    auth = {"authorization": f"Bearer {key}"}
    keyed = [name for name in urls if name != "open"]
    for name, url in urls.items():
        headers = None if name == "open" else auth
        # The key's first call to a model is priced alone: make it before the load; then
        # fill the pools (a new Redis connection costs round trips of its own).
        asyncio.run(throughput(url + chat, 0.3, 1, headers=headers))
        asyncio.run(throughput(url + chat, 1.0, headers=headers))
    rates: dict[str, dict[str, float]] = {}
    trips: dict[str, dict[str, float]] = {}
    for stream in (False, True):
        label = "streamed" if stream else "plain"
        got: dict[str, list[float]] = {name: [] for name in urls}
        counted = {name: [0, 0, 0] for name in keyed}  # reads, scripts, calls
        for _ in range(rounds):
            for name, url in urls.items():
                before = redis.counts()
                rate, done = asyncio.run(
                    throughput(
                        url + chat, seconds, stream=stream, headers=None if name == "open" else auth
                    )
                )
                after = redis.counts()
                got[name].append(rate)
                if name != "open":
                    counted[name][0] += after[0] - before[0] - 2  # less the two INFO of `after`
                    counted[name][1] += after[1] - before[1]
                    counted[name][2] += done
        medians = {name: statistics.median(values) for name, values in got.items()}
        rates[f"req/s at 64 clients, {label}"] = {
            **medians,
            **{f"{n}/open": medians[n] / medians["open"] for n in keyed},
        }
        for name in keyed:
            reads, scripts, calls = counted[name]
            trips.setdefault(name, {})[f"{label}: round trips"] = reads / calls
            trips[name][f"{label}: scripts"] = scripts / calls
    made: dict[str, int] = {}
    for name in keyed:
        # Usage that differs from the last call's: every settlement has something to fix.
        # Settlements overlap the next calls' reservations, so the Redis pool grows
        # (a new connection costs a few round trips of setup, once): until it stops.
        for _ in range(6):  # runs as long as the measured one: as many at once
            before = redis.counts()
            asyncio.run(throughput(urls[name] + chat, seconds, headers=auth, text="vary"))
            if redis.counts()[2] - before[2] == 2:
                break
        before = redis.counts()
        _, done = asyncio.run(throughput(urls[name] + chat, seconds, headers=auth, text="vary"))
        after = redis.counts()
        made[name] = after[2] - before[2] - 2
        trips[name]["settling each: round trips"] = (after[0] - before[0] - 2) / done
        trips[name]["settling each: scripts"] = (after[1] - before[1]) / done
    degraded = {name: degraded_count(urls[name]) for name in keyed}
    print(
        'auth and limits: open = --no-auth; keys = auth = "keys", a key with rpm + tpm + '
        "budget on Redis, and modelplug-limits' policy on; gate = the same without the "
        f"policy; medians of {rounds} alternating rounds of {seconds:g} s; calls that went "
        f"on without Redis: {degraded}"
    )
    for row, values in rates.items():
        print(f"{row:30}" + "".join(f"{k:>10} {v:8.2f}" for k, v in values.items()))
    print(
        "redis round trips per call (socket reads redis-server processed; scripts: EVALSHA); "
        f"new Redis connections while settling each: {made}"
    )
    columns = list(next(iter(trips.values())))
    print(f"{'':8}" + "".join(f"{c:>28}" for c in columns))
    for name, values in trips.items():
        print(f"{name:8}" + "".join(f"{values[c]:28.2f}" for c in columns))
    print(
        json.dumps(
            {
                "auth": {
                    "rates": rates,
                    "round_trips": trips,
                    "degraded": degraded,
                    "new_connections_settling": made,
                }
            }
        )
    )


# -- a flood of wrong keys ---------------------------------------------------------

FLOOD = r"""
import asyncio, json, os, secrets, sys, time
port, rate, seconds = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
# "bursts": the lanes keep one clock, so their keys leave together (16 at once, rate/16
# times a second); "even": lane i runs i/rate behind lane 0, a key every 1/rate s.
shape = sys.argv[4]
BODY = json.dumps({"model": "up/m", "messages": [{"role": "user", "content": "hi"}]}).encode()
statuses = {}
async def lane(rate, start, end):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    n = 0
    while time.perf_counter() < end:
        delay = start + n / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        n += 1
        # A well-formed key nobody made, a new one every time (no cache can know it).
        key = "mpk-" + secrets.token_urlsafe(32)
        writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n"
            b"content-type: application/json\r\nauthorization: Bearer " + key.encode()
            + b"\r\ncontent-length: " + str(len(BODY)).encode() + b"\r\n\r\n" + BODY)
        head = await reader.readuntil(b"\r\n\r\n")
        length = -1
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        if length >= 0:
            await reader.readexactly(length)
        else:  # chunked
            while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
                await reader.readexactly(size + 2)
            await reader.readuntil(b"\r\n")
        status = head.split(b" ", 2)[1].decode()
        statuses[status] = statuses.get(status, 0) + 1
    writer.close()
async def main():
    lanes = 16
    cpu = time.process_time()
    started = time.perf_counter()
    end = started + seconds
    first = started + 0.05  # every lane connected by then
    starts = [first + (i / rate if shape == "even" else 0.0) for i in range(lanes)]
    await asyncio.gather(*(lane(rate / lanes, start, end) for start in starts))
    took = time.perf_counter() - started
    print(json.dumps({"rate": sum(statuses.values()) / took, "statuses": statuses,
        "cpu": time.process_time() - cpu}), flush=True)
try:
    import uvloop; uvloop.run(main())
except ImportError:
    asyncio.run(main())
"""


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_flood(port: str, rate: float, seconds: float, shape: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", FLOOD, port, str(rate), str(seconds), shape],
        stdout=subprocess.PIPE,
        text=True,
    )


def key_flood(
    keys_url: str,
    key: str,
    seconds: float,
    rounds: int,
    rate: float,
    pid: int,
    label: str = "keys gateway",
    shape: str = "bursts",
    flood_url: str | None = None,
) -> None:
    """Latency of valid calls at 100 req/s to ``label`` (the keys gateway or the bare
    relay), alone and under a flood of wrong keys at ``rate`` a second in ``shape`` from
    another process, in alternating rounds; and the flooded server's CPU per wrong key
    (``pid``), from a flood alone. The flood goes to ``flood_url`` when given (a control:
    the same load on the machine, none of it in the measured server)."""
    chat = keys_url + "/v1/chat/completions"
    port = (flood_url or keys_url).rsplit(":", 1)[1]
    auth = {"authorization": f"Bearer {key}"}
    # The flood alone: what one wrong key costs the gateway.
    used = cpu_seconds(pid)
    out, _ = start_flood(port, rate, seconds, shape).communicate(timeout=120)
    used = cpu_seconds(pid) - used
    answered = sum(json.loads(out)["statuses"].values())
    # The sender shares the machine: what it costs is taken from everything else too.
    sender = json.loads(out)["cpu"]
    alone: list[float] = []
    flooded: list[float] = []
    floods = []
    per_round = []
    for _ in range(rounds):
        calm = [r[0] for r in asyncio.run(fixed_rate(chat, False, seconds, headers=auth))]
        flood = start_flood(port, rate, seconds + 1.5, shape)
        time.sleep(0.5)  # the flood is on before the valid calls start
        stormy = [r[0] for r in asyncio.run(fixed_rate(chat, False, seconds, headers=auth))]
        out, _ = flood.communicate(timeout=60)
        floods.append(json.loads(out))
        alone += calm
        flooded += stormy
        per_round.append((pct(stormy, 0.5) / pct(calm, 0.5), pct(stormy, 0.99) / pct(calm, 0.99)))
    flood_rate = statistics.median(f["rate"] for f in floods)
    statuses: dict[str, int] = {}
    for f in floods:
        for status, n in f["statuses"].items():
            statuses[status] = statuses.get(status, 0) + n
    rows = {
        "p50 ms": (pct(alone, 0.5) * 1000, pct(flooded, 0.5) * 1000),
        "p99 ms": (pct(alone, 0.99) * 1000, pct(flooded, 0.99) * 1000),
    }
    print(
        f"wrong-key flood ({shape}) on the {label}: {flood_rate:.0f} requests/s of new "
        f"made-up keys (answers {statuses}), valid calls at 100 req/s, {rounds} alternating "
        f"rounds of {seconds:g} s; "
        f"the flooded server's CPU per wrong key {used / answered * 1e6:.0f} us (goal <= 200) "
        f"({used / seconds * 100:.0f}% of a core at {answered / seconds:.0f}/s); the flood's "
        f"sender {sender / answered * 1e6:.0f} us per key ({sender / seconds * 100:.0f}% of a core)"
    )
    print(f"{'':10}{'alone':>10}{'flooded':>10}{'ratio':>8}")
    for name, (a, b) in rows.items():
        print(f"{name:10}{a:10.2f}{b:10.2f}{b / a:8.2f}")
    print("ratios per round (p50, p99): " + ", ".join(f"{a:.2f} {b:.2f}" for a, b in per_round))
    print(
        "median of the rounds' ratios (a spike from another process on the machine moves "
        f"one round, not this): p50 {statistics.median(r[0] for r in per_round):.2f}, "
        f"p99 {statistics.median(r[1] for r in per_round):.2f} (goal: valid calls slowed by "
        "<= 10%, 1.10)"
    )
    print(
        json.dumps(
            {
                "flood": {
                    "target": label,
                    "shape": shape,
                    "rate": flood_rate,
                    "statuses": statuses,
                    "cpu_us_per_wrong_key": used / answered * 1e6,
                    "sender_cpu_us_per_wrong_key": sender / answered * 1e6,
                    "per_round": per_round,
                    **{
                        name: {"alone": a, "flooded": b, "ratio": b / a}
                        for name, (a, b) in rows.items()
                    },
                }
            }
        )
    )


CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
HERE = Path(__file__).resolve().parent
LITELLM = HERE / ".peers" / "bin" / "litellm"
# Portkey's open-source gateway as its npm package ships it (the version the docs' figures
# name; install it with the command in docs/contributing.md).
PORTKEY_VERSION = "1.15.2"
PORTKEY = HERE / ".node" / "node_modules" / "@portkey-ai" / "gateway" / "build" / "start-server.js"
# Portkey's server listens without naming a host, which Node takes as every interface:
# this makes such a listen() loopback only, and changes nothing else.
LOOPBACK_ONLY = (
    "data:text/javascript,import net from 'node:net';"
    "const listen = net.Server.prototype.listen;"
    "net.Server.prototype.listen = function (...a) {"
    "if (typeof a[0] === 'number' %26%26 typeof a[1] !== 'string') {"
    "if (a[1] === undefined) a[1] = '127.0.0.1'; else a.splice(1, 0, '127.0.0.1'); }"
    "return listen.apply(this, a); };"
)


class Served(NamedTuple):
    """A proxy the compare mode measures: its column, how to start it on a port, the path
    that answers once it is up, and the headers each call carries."""

    name: str
    start: Callable[[int], subprocess.Popen[bytes]]
    ready: str
    headers: dict[str, str] | None = None


def proxies(args: argparse.Namespace, work: Path, upstream_url: str) -> list[Served]:
    """The bare relay, the gateway on each of ``--servers``, LiteLLM's proxy and Portkey's
    gateway (each when installed), all open, one worker each, in front of the upstream."""
    found = [Served("relay", lambda port: start_relay(upstream_url, port=port)[1], "/health")]
    for server in args.servers:
        found.append(
            Served(
                "gateway" if server == "uvicorn" else f"gateway/{server}",
                functools.partial(open_gateway, work, upstream_url, server=server),
                "/health",
            )
        )
    litellm = Path(args.litellm) if args.litellm else None
    if litellm and litellm.exists():
        found.append(
            Served(
                "litellm",
                lambda port: start_litellm(litellm, work, upstream_url, port),
                "/health/liveliness",
            )
        )
        print(f"litellm {installed_version(litellm.parent / 'python', 'litellm')}: {litellm}")
    else:
        print(
            f"litellm: skipped ({args.litellm or LITELLM} not found; install it as "
            "docs/contributing.md says, or pass --litellm)"
        )
    node = shutil.which("node")
    portkey = Path(args.portkey)
    if node and portkey.exists():
        found.append(
            Served(
                "portkey",
                lambda port: start_portkey(node, portkey, port),
                "/",
                # An OpenAI-shaped provider at a custom host: the upstream, as the others.
                {
                    "x-portkey-provider": "openai",
                    "x-portkey-custom-host": upstream_url + "/v1",
                    "authorization": "Bearer unused",
                },
            )
        )
        package = json.loads((portkey.parents[1] / "package.json").read_text())
        on = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
        print(f"portkey {package['version']} on node {on}: {portkey}")
        if package["version"] != PORTKEY_VERSION:
            print(f"  (the figures in docs/performance.md are of {PORTKEY_VERSION})")
    else:
        print(
            f"portkey: skipped ({'node' if not node else portkey} not found; install it as "
            "docs/contributing.md says, or pass --portkey)"
        )
    return found


def installed_version(python: Path, distribution: str) -> str:
    """``distribution``'s version in the environment of ``python`` ("?" if unknown)."""
    asked = f"import importlib.metadata as m; print(m.version({distribution!r}))"
    try:
        done = subprocess.run([python, "-c", asked], capture_output=True, text=True, timeout=60)
    except OSError:
        return "?"
    return done.stdout.strip() or "?"


def start_litellm(
    command: Path, work: Path, upstream_url: str, port: int
) -> subprocess.Popen[bytes]:
    """LiteLLM's proxy, one worker, the upstream as ``up/m``, no master key."""
    (work / "litellm.yaml").write_text(
        textwrap.dedent(
            f"""
            model_list:
              - model_name: up/m
                litellm_params:
                  model: openai/m
                  api_base: {upstream_url}/v1
                  api_key: unused
            litellm_settings:
              telemetry: false
            """
        )
    )
    return subprocess.Popen(
        [
            str(command),
            "--config", str(work / "litellm.yaml"),
            "--host", "127.0.0.1",
            "--port", str(port),
            "--num_workers", "1",
        ],
        cwd=work,
        # No master key: every proxy runs open on loopback here, as --no-auth does; the
        # bundled model cost map, not a fetch from the network at start.
        env={
            **os.environ,
            "LITELLM_LOG": "ERROR",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY": "true",
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        **served(),
    )  # fmt: skip


def start_portkey(node: str, script: Path, port: int) -> subprocess.Popen[bytes]:
    """Portkey's gateway on Node.js, as its package starts it (``--headless``: no UI)."""
    return subprocess.Popen(
        [node, "--import", LOOPBACK_ONLY, str(script), f"--port={port}", "--headless"],
        cwd=script.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        **served(),
    )


def measure(
    url: str, headers: dict[str, str] | None, pid: int, upstream_url: str, args: argparse.Namespace
) -> dict[str, float]:
    """One proxy's row: added latency and CPU per call at 100 req/s (each against the
    upstream alone measured just before it), req/s and CPU per call at 64 streamed
    clients, RSS growth over ``--rss-requests`` calls. ``pid``'s processes, after a
    warm-up of ``--warm`` calls (connection pools, caches, a JIT's compiled code)."""
    chat = url + CHAT
    asyncio.run(many(chat, args.warm, headers))
    row: dict[str, float] = {}
    for stream in (False, True):
        label = "stream" if stream else "plain"
        direct = asyncio.run(fixed_rate(upstream_url + CHAT, stream, args.seconds))
        used = family_cpu_seconds(pid)
        got = asyncio.run(fixed_rate(chat, stream, args.seconds, headers=headers))
        used = family_cpu_seconds(pid) - used
        base = [r[0] for r in direct]
        total = [r[0] for r in got]
        row[f"{label} added p50 ms"] = (pct(total, 0.5) - pct(base, 0.5)) * 1000
        row[f"{label} added p99 ms"] = (pct(total, 0.99) - pct(base, 0.99)) * 1000
        if stream:
            row["first byte added ms"] = (
                statistics.median(r[1] for r in got) - statistics.median(r[1] for r in direct)
            ) * 1000
        row[f"{label} CPU us/call at 100/s"] = used / (len(got) + WARM_CALLS) * 1e6
    used = family_cpu_seconds(pid)
    rate, done = asyncio.run(throughput(chat, args.seconds, headers=headers))
    row["req/s at 64 streams"] = rate
    row["CPU us/call at 64 streams"] = (family_cpu_seconds(pid) - used) / done * 1e6
    before = rss_kb(pid)
    asyncio.run(many(chat, args.rss_requests, headers))
    after = rss_kb(pid)
    row[f"RSS growth MB ({args.rss_requests} calls)"] = (after - before) / 1024
    row["RSS MB after"] = after / 1024
    return row


def goals(rows: dict[str, dict[str, float]]) -> list[str]:
    """Each gateway column against issue 44's goals: met or missed, with its figure."""
    lines = []
    growth = next(key for key in next(iter(rows.values())) if key.startswith("RSS growth"))
    cpu_key = "stream CPU us/call at 100/s"
    for name, row in rows.items():
        if not name.startswith("gateway"):
            continue
        checks: list[tuple[str, str, str, bool]] = []
        for kind in ("plain", "stream"):
            for q, limit in (("p50", 1), ("p99", 5)):
                added = row[f"{kind} added {q} ms"]
                checks.append(
                    (f"{kind} added {q}", f"{added:.2f} ms", f"<= {limit} ms", added <= limit)
                )
        cpu = row[cpu_key]
        if "litellm" in rows:
            share = cpu / rows["litellm"][cpu_key]
            checks.append(
                (
                    "CPU per streamed call",
                    f"{cpu:.0f} us, {share:.2f}x litellm's",
                    "<= 0.20x",
                    share <= 0.2,
                )
            )
            times = row["req/s at 64 streams"] / rows["litellm"]["req/s at 64 streams"]
            checks.append(("req/s at 64 streams", f"{times:.1f}x litellm's", ">= 5x", times >= 5))
        if "portkey" in rows:
            share = cpu / rows["portkey"][cpu_key]
            checks.append(
                (
                    "CPU per streamed call",
                    f"{cpu:.0f} us, {share:.2f}x portkey's",
                    "< 1x",
                    share < 1,
                )
            )
        checks.append((growth, f"{row[growth]:.2f} MB", "<= 5 MB", row[growth] <= 5))
        for what, figure, goal, met in checks:
            lines.append(f"{name}: {what} {figure} (goal {goal}): {'met' if met else 'MISSED'}")
    return lines


def compare(args: argparse.Namespace, work: Path, upstream_url: str) -> None:
    """Each proxy of :func:`proxies` in turn, alone on the served CPU while measured."""
    rows: dict[str, dict[str, float]] = {}
    started = time.monotonic()
    for target in proxies(args, work, upstream_url):
        port = free_port()
        process = target.start(port)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_up(url + target.ready, timeout=180)
            rows[target.name] = measure(url, target.headers, process.pid, upstream_url, args)
        finally:
            stop(process)
        print(f"  {target.name} measured ({time.monotonic() - started:.0f} s so far)", flush=True)
    direct_rps = asyncio.run(throughput(upstream_url + CHAT, args.seconds))[0]
    print(f"upstream alone: {direct_rps:.0f} req/s at 64 streams (the load generator's ceiling)")
    print(
        "relay: the floor, an ASGI app on the gateway's uvicorn settings (httptools, uvloop, "
        "one worker) relaying bytes and parsing nothing; CPU: the proxy's processes' user + "
        "system time over the phase, per call"
    )
    keys = list(next(iter(rows.values())))
    print(f"{'':34}" + "".join(f"{name:>16}" for name in rows))
    for key in keys:
        print(f"{key:34}" + "".join(f"{rows[n][key]:16.2f}" for n in rows))
    for line in goals(rows):
        print(line)
    print(json.dumps({"compare": rows, "upstream_rps": direct_rps}))


def shape_overhead(args: argparse.Namespace, work: Path, upstream_url: str) -> None:
    """The ``shapes`` mode: what /v1/responses adds beside /v1/chat/completions, one
    gateway, the same upstream, the same run (see the module docstring)."""
    server = args.servers[0]
    port = free_port()
    process = open_gateway(work, upstream_url, port, server)
    paths = {"chat": CHAT, "responses": RESPONSES}
    taken: dict[str, dict[str, list[float]]] = {name: {} for name in paths}
    try:
        url = f"http://127.0.0.1:{port}"
        wait_up(url + "/health", timeout=180)
        for path in paths.values():
            asyncio.run(many(url + path, args.warm))
        for round_ in range(args.rounds):
            order = list(paths) if round_ % 2 == 0 else list(reversed(paths))
            for stream in (False, True):
                label = "stream" if stream else "plain"
                for name in order:
                    direct = asyncio.run(fixed_rate(upstream_url + CHAT, stream, args.seconds))
                    used = family_cpu_seconds(process.pid)
                    got = asyncio.run(fixed_rate(url + paths[name], stream, args.seconds))
                    used = family_cpu_seconds(process.pid) - used
                    base = [r[0] for r in direct]
                    total = [r[0] for r in got]
                    figures = {
                        f"{label} added p50 ms": (pct(total, 0.5) - pct(base, 0.5)) * 1000,
                        f"{label} added p99 ms": (pct(total, 0.99) - pct(base, 0.99)) * 1000,
                        f"{label} CPU us/call": used / (len(got) + WARM_CALLS) * 1e6,
                    }
                    for key, value in figures.items():
                        taken[name].setdefault(key, []).append(value)
            print(f"  round {round_ + 1} of {args.rounds} measured", flush=True)
    finally:
        stop(process)
    rows = {name: {k: statistics.median(v) for k, v in taken[name].items()} for name in paths}
    print(
        f"gateway on {server}, medians of {args.rounds} rounds at 100 req/s, each path minus "
        "the upstream alone measured just before it; CPU: the gateway's user + system time "
        "per call"
    )
    print(f"{'':26}{'chat':>12}{'responses':>12}{'ratio':>10}")
    for key in rows["chat"]:
        chat, responses = rows["chat"][key], rows["responses"][key]
        ratio = f"{responses / chat:10.2f}" if chat > 0 else f"{'-':>10}"
        print(f"{key:26}{chat:12.3f}{responses:12.3f}{ratio}")
    for key in ("plain added p50 ms", "stream added p50 ms", "stream CPU us/call"):
        chat, responses = rows["chat"][key], rows["responses"][key]
        met = responses <= chat
        print(
            f"/v1/responses {key} {responses:.3f} vs /v1/chat/completions {chat:.3f} (goal: no "
            f"more): {'met' if met else 'MISSED'}"
        )
    print(json.dumps({"shapes": rows}))


def open_gateway(
    work: Path, upstream_url: str, port: int, server: str = "uvicorn"
) -> subprocess.Popen[bytes]:
    """``modelplug gateway serve --no-auth``, one worker on ``server``, in front of the
    upstream."""
    config = work / "config.toml"
    config.write_text(
        textwrap.dedent(
            f"""
            [providers.up]
            type = "openai-compatible"
            base_url = "{upstream_url}/v1"
            """
        )
    )
    os.chmod(config, 0o600)
    env = {
        **os.environ,
        "MODELPLUG_CONFIG": str(config),
        "MODELPLUG_DATA_DIR": str(work / "data"),
        "MODELPLUG_PLUGINS": "modelplug-openai-compat,modelplug-gateway",
    }
    return subprocess.Popen(
        [
            sys.executable, "-m", "modelplug", "gateway", "serve", "--no-auth",
            "--port", str(port), "--server", server,
        ],
        env=env,
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        **served(),
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rss-requests", type=int, default=20000)
    parser.add_argument(
        "--warm", type=int, default=2000, help="calls to each proxy before it is measured"
    )
    parser.add_argument(
        "--litellm",
        default=str(LITELLM),
        help="LiteLLM's litellm command, in an environment of its own (default: bench/.peers)",
    )
    parser.add_argument(
        "--portkey",
        default=str(PORTKEY),
        help="Portkey's build/start-server.js, run with node (default: bench/.node)",
    )
    parser.add_argument(
        "--servers",
        default="uvicorn,granian",
        help="comma-separated: the servers the gateway is measured on (compare, flood; auth "
        "uses the first)",
    )
    parser.add_argument(
        "--modes",
        default="compare",
        help="comma-separated: compare (against LiteLLM and Portkey), auth (virtual keys and "
        "limits on Redis against no auth), flood (valid calls under a wrong-key flood), "
        "shapes (/v1/responses beside /v1/chat/completions)",
    )
    parser.add_argument("--flood-rate", type=float, default=1000.0)
    parser.add_argument(
        "--flood-shapes",
        default="bursts,even",
        help="comma-separated: bursts (16 keys at once, rate/16 times a second), even "
        "(a key every 1/rate s)",
    )
    parser.add_argument(
        "--flood-targets",
        default="keys,relay",
        help="comma-separated: keys (the keys gateway, limits policy on), gate (the key "
        "gate alone), relay (the bare relay), elsewhere (valid calls to the keys gateway, "
        "the flood to the bare relay)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (auth, flood)")
    parser.add_argument(
        "--pin",
        choices=("auto", "on", "off"),
        default="auto",
        help="on: served processes on the first CPU, everything else on the rest; auto: on "
        "where there are two CPUs or more",
    )
    args = parser.parse_args()
    args.servers = args.servers.split(",")
    if unknown := set(args.servers) - {"uvicorn", "granian"}:
        parser.error(f"unknown servers: {', '.join(sorted(unknown))} (uvicorn, granian)")
    if "granian" in args.servers and importlib.util.find_spec("granian") is None:
        print("granian: skipped (not installed: pip install 'modelplug-gateway[granian]')")
        args.servers.remove("granian")
    if not args.servers:
        parser.error("no server to measure the gateway on")
    modes = set(args.modes.split(","))
    if unknown := modes - {"compare", "auth", "flood", "shapes"}:
        parser.error(f"unknown modes: {', '.join(sorted(unknown))}")
    if unknown := set(args.flood_shapes.split(",")) - {"bursts", "even"}:
        parser.error(f"unknown flood shapes: {', '.join(sorted(unknown))} (bursts, even)")
    flood_targets = args.flood_targets.split(",")
    if unknown := set(flood_targets) - {"keys", "gate", "relay", "elsewhere"}:
        parser.error(
            f"unknown flood targets: {', '.join(sorted(unknown))} (keys, gate, relay, elsewhere)"
        )
    if args.pin != "off":
        pin(parser, asked=args.pin == "on")

    work = Path(tempfile.mkdtemp(prefix="gateway-bench-"))
    up_port = free_port()
    upstream_url = f"http://127.0.0.1:{up_port}"
    processes: list[Any] = [subprocess.Popen([sys.executable, "-c", UPSTREAM, str(up_port)])]
    redis: RedisServer | None = None
    try:
        wait_up(upstream_url + "/")
        if "compare" in modes:
            compare(args, work, upstream_url)
        if "shapes" in modes:
            shape_overhead(args, work, upstream_url)
        if modes & {"auth", "flood"}:
            redis = RedisServer(work)
            keys = KeysGateways(work, upstream_url, redis.url)
            urls: dict[str, str] = {}
            logs: list[Path] = []
            pids: dict[str, int] = {}
            first = args.servers[0]
            # The keys gateway on each server (for the flood); the key gate alone on the
            # first (auth, flood's gate target).
            wanted = [(keys_name(server), True, server) for server in args.servers]
            if "auth" in modes or "gate" in flood_targets:
                wanted.append(("gate", False, first))
            if "flood" not in modes:
                wanted = [w for w in wanted if w[0] in ("keys", "gate")]
            for name, policy, server in wanted:
                port = free_port()
                gateway, log = keys.start(port, policy=policy, server=server)
                processes.append(gateway)
                pids[name] = gateway.pid
                logs.append(log)
                urls[name] = f"http://127.0.0.1:{port}"
            if "auth" in modes:
                port = free_port()
                processes.append(open_gateway(work, upstream_url, port, first))
                urls["open"] = f"http://127.0.0.1:{port}"
            for url in urls.values():
                wait_up(url + "/health", timeout=120)
            if "auth" in modes:
                ordered = {name: urls[name] for name in ("open", "keys", "gate")}
                auth_and_limits(ordered, keys.key, redis, args.seconds, args.rounds)
            if "flood" in modes:
                # The same floods on the floor: what the machine and the server do to
                # valid calls before the gateway's own work.
                relay_url, relay = start_relay(upstream_url)
                processes.append(relay)
                wait_up(relay_url + "/health")
                every: dict[str, list[tuple[str, str, str, int, str | None]]] = {
                    "keys": [
                        (
                            f"keys gateway ({server})", urls[keys_name(server)], keys.key,
                            pids[keys_name(server)], None,
                        )
                        for server in args.servers
                    ],
                    "gate": [(
                        f"key gate alone ({first})", urls.get("gate", ""), keys.key,
                        pids.get("gate", 0), None,
                    )],
                    "relay": [("bare relay", relay_url, RELAY_KEY, relay.pid, None)],
                    "elsewhere": [(
                        f"keys gateway ({first}; the flood sent to the bare relay)",
                        urls["keys"], keys.key, relay.pid, relay_url,
                    )],
                }  # fmt: skip
                targets = [target for name in flood_targets for target in every[name]]
                for shape in args.flood_shapes.split(","):
                    for label, url, key, pid, flood_url in targets:
                        key_flood(
                            url, key, args.seconds, args.rounds, args.flood_rate, pid, label,
                            shape, flood_url,
                        )  # fmt: skip
            for log in logs:
                warned = [line for line in log.read_text().splitlines() if "degraded" in line]
                if warned:
                    print(f"{log.name}: {warned[0]}")
    finally:
        if redis is not None:
            processes.append(redis.process)
        for process in processes:
            stop(process)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
