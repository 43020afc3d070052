"""The gateway in front of a loopback upstream, against LiteLLM's proxy in front of the
same upstream, in one run.

    python bench/gateway.py [--seconds 5] [--rss-requests 20000] [--litellm PATH]

LiteLLM is never a project dependency: install it in a venv of its own and pass its
``litellm`` command (skipped when absent)::

    python -m venv /tmp/litellm-venv
    /tmp/litellm-venv/bin/pip install "litellm[proxy]==1.110.2"
    # (where the litellm-proxy package is not on the index: litellm==1.110.2 plus the
    # modules its proxy names as missing, one by one: fastapi uvicorn uvloop PyJWT
    # semver expression fastapi-sso mcp soundfile backoff orjson apscheduler pyyaml
    # python-multipart cryptography pynacl websockets email-validator)
    python bench/gateway.py --litellm /tmp/litellm-venv/bin/litellm

Processes: the upstream (a minimal asyncio HTTP/1.1 server answering Chat Completions,
JSON or a 5-chunk SSE stream, keep-alive; far cheaper than either proxy), the gateway
(``modelplug gateway serve``, one worker), LiteLLM's proxy (one worker), and this one,
the load generator (httpx2, asyncio). Printed, for the gateway and LiteLLM:

- added latency (proxy minus direct to the upstream), p50 and p99, at a fixed
  100 requests/s, streamed and not;
- time to first byte of a streamed answer, minus the upstream's own;
- requests/s with 64 concurrent streamed clients;
- the proxy's RSS growth over ``--rss-requests`` requests (after a warm-up).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

UPSTREAM = r"""
import asyncio, json, sys
CHUNK = lambda d, f: ("data: " + json.dumps({"id": "c", "object": "chat.completion.chunk",
    "created": 1, "model": "m", "choices": [{"index": 0, "delta": d, "finish_reason": f}]})
    + "\n\n").encode()
SSE = (CHUNK({"role": "assistant", "content": ""}, None)
    + b"".join(CHUNK({"content": w}, None) for w in ["Hello", " from", " the", " upstream"])
    + CHUNK({}, "stop") + ("data: " + json.dumps({"id": "c", "object": "chat.completion.chunk",
    "created": 1, "model": "m", "choices": [], "usage": {"prompt_tokens": 5,
    "completion_tokens": 4, "total_tokens": 9}}) + "\n\n").encode() + b"data: [DONE]\n\n")
JSON = json.dumps({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content":
    "Hello from the upstream"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9}}).encode()
def head(kind, n):
    return (f"HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {n}\r\n\r\n").encode()
SSE_ANSWER = head("text/event-stream", len(SSE)) + SSE
JSON_ANSWER = head("application/json", len(JSON)) + JSON
async def handle(reader, writer):
    try:
        while True:
            headers = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in headers.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            body = await reader.readexactly(length) if length else b""
            writer.write(SSE_ANSWER if b'"stream": true' in body or b'"stream":true' in body
                         else JSON_ANSWER)
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def body(stream: bool) -> dict[str, object]:
    return {"model": "up/m", "messages": [{"role": "user", "content": "hi"}], "stream": stream}


async def one(client: object, url: str, stream: bool) -> tuple[float, float]:
    """(seconds to the last byte, seconds to the first body byte)."""
    started = time.perf_counter()
    first = 0.0
    async with client.stream("POST", url, json=body(stream)) as answer:  # type: ignore[attr-defined]
        async for _ in answer.aiter_raw():
            if not first:
                first = time.perf_counter() - started
        if answer.status_code != 200:
            raise RuntimeError(f"{url}: {answer.status_code}")
    return time.perf_counter() - started, first


async def fixed_rate(
    url: str, stream: bool, seconds: float, rate: float = 100.0
) -> list[tuple[float, float]]:
    import httpx2

    results: list[tuple[float, float]] = []
    async with httpx2.AsyncClient(limits=httpx2.Limits(max_connections=64), timeout=30) as client:
        for _ in range(20):  # warm the pool and the proxy
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


async def throughput(url: str, seconds: float, clients: int = 64) -> float:
    import httpx2

    done = 0
    async with httpx2.AsyncClient(
        limits=httpx2.Limits(max_connections=clients), timeout=30
    ) as client:
        end = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal done
            while time.perf_counter() < end:
                await one(client, url, True)
                done += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        return done / (time.perf_counter() - started)


async def many(url: str, count: int) -> None:
    import httpx2

    async with httpx2.AsyncClient(limits=httpx2.Limits(max_connections=16), timeout=30) as client:
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rss-requests", type=int, default=20000)
    parser.add_argument("--litellm", help="LiteLLM's litellm command (its own venv)")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="gateway-bench-"))
    up_port, gw_port, ll_port = free_port(), free_port(), free_port()
    upstream_url = f"http://127.0.0.1:{up_port}"
    processes = [subprocess.Popen([sys.executable, "-c", UPSTREAM, str(up_port)])]
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
    gateway = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "modelplug",
            "gateway",
            "serve",
            "--no-auth",
            "--port",
            str(gw_port),
        ],
        env=env,
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    processes.append(gateway)
    targets = {"gateway": (f"http://127.0.0.1:{gw_port}", gateway)}
    if args.litellm and Path(args.litellm).exists():
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
        litellm = subprocess.Popen(
            [
                args.litellm,
                "--config",
                str(work / "litellm.yaml"),
                "--port",
                str(ll_port),
                "--num_workers",
                "1",
            ],
            cwd=work,
            # No master key: both proxies run open on loopback here, as --no-auth does.
            env={
                **os.environ,
                "LITELLM_LOG": "ERROR",
                "LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY": "true",
            },
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        processes.append(litellm)
        targets["litellm"] = (f"http://127.0.0.1:{ll_port}", litellm)
    try:
        wait_up(upstream_url + "/")
        for url, _ in targets.values():
            wait_up(url + "/health", timeout=120)
        rows: dict[str, dict[str, float]] = {}
        direct = {}
        for stream in (False, True):
            direct[stream] = asyncio.run(
                fixed_rate(upstream_url + "/v1/chat/completions", stream, args.seconds)
            )
        for name, (url, process) in targets.items():
            row: dict[str, float] = {}
            for stream in (False, True):
                got = asyncio.run(fixed_rate(url + "/v1/chat/completions", stream, args.seconds))
                base = [r[0] for r in direct[stream]]
                total = [r[0] for r in got]
                label = "stream" if stream else "plain"
                row[f"{label} added p50 ms"] = (pct(total, 0.5) - pct(base, 0.5)) * 1000
                row[f"{label} added p99 ms"] = (pct(total, 0.99) - pct(base, 0.99)) * 1000
                if stream:
                    row["first byte added ms"] = (
                        statistics.median(r[1] for r in got)
                        - statistics.median(r[1] for r in direct[stream])
                    ) * 1000
            row["req/s at 64 streams"] = asyncio.run(
                throughput(url + "/v1/chat/completions", args.seconds)
            )
            asyncio.run(many(url + "/v1/chat/completions", 2000))  # warm
            before = rss_kb(process.pid)
            asyncio.run(many(url + "/v1/chat/completions", args.rss_requests))
            row[f"RSS growth MB over {args.rss_requests}"] = (rss_kb(process.pid) - before) / 1024
            rows[name] = row
        direct_rps = asyncio.run(throughput(upstream_url + "/v1/chat/completions", args.seconds))
        print(
            f"upstream alone: {direct_rps:.0f} req/s at 64 streams (the load generator's ceiling)"
        )
        keys = list(next(iter(rows.values())))
        print(f"{'':34}" + "".join(f"{name:>12}" for name in rows))
        for key in keys:
            print(f"{key:34}" + "".join(f"{rows[n][key]:12.2f}" for n in rows))
        if "litellm" in rows:
            ratio = rows["gateway"]["req/s at 64 streams"] / rows["litellm"]["req/s at 64 streams"]
            print(f"throughput gateway / litellm: {ratio:.1f}x")
        print(json.dumps(rows))
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


if __name__ == "__main__":
    main()
