"""Concurrency: 256 streams open at once from one client, on one event loop, against a
loopback asyncio server that serves them all at once.

    python bench/concurrency.py [--streams 256] [--chunks 2000] [--repeat 3]
                                [--peers-python PATH] [--litellm-streams 32]

Readers, each in a fresh process per round (rounds alternate between readers; the
median is printed):

- raw httpx2: one ``httpx2.AsyncClient`` (pool of 1,000), the loop of bench/stream.py;
- modelplug: the user's plain ``Client()`` with every plugin (the fallback policy
  included) and the bench server as an openai-compatible provider;
- modelplug + retries: the same, with 10% of the streams answered 503 (Retry-After: 0)
  on their first request, so the fallback policy retries them while the others stream;
- modelplug, pool of 100: ``[http] max_connections = 100`` (httpx2's default size), to
  show what the limit does: streams past it start with an ``http_pool_full`` Notice
  and wait for a connection;
- AsyncOpenAI: the openai SDK's async client;
- litellm.acompletion (when installed here or in ``--peers-python``), with
  ``--litellm-streams`` streams (it is about 100x slower per event; its rate is what
  is compared).

Printed per reader: total text events per second of wall time (all streams from
start to last byte), the most streams the server saw open at once (must be all of
them: httpx2's default pool would cap it at 100), and peak memory per concurrent
stream (the process's peak RSS less its RSS before the streams started, over the
number of streams). Ratios from the same run: modelplug / raw (target >= 0.85x), and
modelplug against each peer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PEERS = HERE / ".peers" / "bin" / "python"
MODEL = "bench-model"

# ------------------------------------------------------------------ the loopback server


def sse_body(chunks: int) -> bytes:
    parts = []
    for i in range(chunks):
        chunk = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1764460800,
            "model": MODEL,
            "choices": [{"index": 0, "delta": {"content": f" w{i}"}, "finish_reason": None}],
        }
        parts.append(b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n")
    end = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1764460800,
        "model": MODEL,
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": chunks, "total_tokens": chunks + 10},
    }
    parts.append(b"data: " + json.dumps(end).encode() + b"\n\ndata: [DONE]\n\n")
    return b"".join(parts)


class Server:
    """HTTP/1.1 keep-alive on asyncio: every POST gets the SSE body, in 64 KB writes,
    except a model named ``fail-once-*``, whose first request gets a 503.

    Once a reader announces how many streams it opens (``GET /expect?n=N``), each
    response sends its first 64 KB and then holds the rest until N responses are open
    at once (or 5 s have passed): so every stream is provably open at the same time,
    and a client whose pool cannot open N connections shows it (and is slowed by it).
    """

    HOLD_SECONDS = 5.0

    def __init__(self, chunks: int) -> None:
        self.body = sse_body(chunks)
        self.open = 0
        self.peak = 0
        self.expect = 0
        self.all_open = asyncio.Event()
        self.failed: set[str] = set()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                length = 0
                while True:
                    header = await reader.readline()
                    if header in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = header.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length) if length else b""
                if line.startswith(b"GET /stats"):
                    await self.stats(writer)
                    continue
                if line.startswith(b"GET /expect?n="):
                    self.expect = int(line.split(b"=", 1)[1].split()[0])
                    self.peak, self.all_open = 0, asyncio.Event()
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                    await writer.drain()
                    continue
                model = json.loads(body or b"{}").get("model", "")
                if model.startswith("fail-once-") and model not in self.failed:
                    self.failed.add(model)
                    writer.write(
                        b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
                        b'retry-after: 0\r\ncontent-length: 26\r\n\r\n{"error":"try again soon"}'
                    )
                    await writer.drain()
                    continue
                await self.stream(writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()

    async def stream(self, writer: asyncio.StreamWriter) -> None:
        self.open += 1
        self.peak = max(self.peak, self.open)
        if self.expect and self.open >= self.expect:
            self.all_open.set()
        try:
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"content-length: %d\r\n\r\n" % len(self.body)
            )
            view = memoryview(self.body)
            for start in range(0, len(view), 1 << 16):
                writer.write(view[start : start + (1 << 16)])
                await writer.drain()
                if start == 0 and self.expect:
                    try:
                        await asyncio.wait_for(self.all_open.wait(), self.HOLD_SECONDS)
                    except TimeoutError:
                        pass
        finally:
            self.open -= 1

    async def stats(self, writer: asyncio.StreamWriter) -> None:
        data = json.dumps({"peak": self.peak}).encode()
        self.peak, self.expect = 0, 0
        self.failed.clear()
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(data), data))
        await writer.drain()


async def serve(chunks: int) -> None:
    server = Server(chunks)
    listening = await asyncio.start_server(server.handle, "127.0.0.1", 0, backlog=1024)
    port = listening.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}", flush=True)
    await listening.serve_forever()


def start_server(chunks: int) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--chunks", str(chunks)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http://"):
        process.kill()
        raise SystemExit("the bench server did not start")
    return process, url


def server_peak(url: str) -> int:
    """The most streams open at once since the last call (and reset the 503s)."""
    import urllib.request

    with urllib.request.urlopen(url + "/stats", timeout=10) as answer:
        peak: int = json.loads(answer.read())["peak"]
    return peak


# ------------------------------------------------------------------------- the readers

REQUEST = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True}


async def raw_reader(url: str, streams: int) -> int:
    import codecs

    import httpx2

    loads = json.loads

    async def one(http: Any) -> int:
        count = 0
        async with http.stream("POST", url + "/v1/chat/completions", json=REQUEST) as response:
            decode = codecs.getincrementaldecoder("utf-8")().decode
            rest = ""
            async for chunk in response.aiter_bytes():
                lines = (rest + decode(chunk)).split("\n")
                rest = lines.pop()
                for line in lines:
                    if line.startswith("data:") and line != "data: [DONE]":
                        event = loads(line[5:])
                        choices = event.get("choices")
                        if choices and choices[0]["delta"].get("content"):
                            count += 1
        return count

    limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
    async with httpx2.AsyncClient(timeout=120, limits=limits) as http:
        return await timed_gather(one(http) for _ in range(streams))


def modelplug_setup(
    url: str, fail_share: float, streams: int, pool: int | None
) -> tuple[Any, list[str]]:
    from modelplug import Client

    config: dict[str, Any] = {
        "providers": {"bench": {"type": "openai-compatible", "base_url": url + "/v1"}}
    }
    if pool is not None:
        config["http"] = {"max_connections": pool}
    client = Client(config=config, environ={})
    failing = int(streams * fail_share)
    specs = [f"bench/fail-once-{i}" if i < failing else f"bench/{MODEL}" for i in range(streams)]
    return client, specs


async def modelplug_reader(
    url: str, streams: int, fail_share: float = 0.0, pool: int | None = None
) -> int:
    from modelplug.contract.types import Notice, TextDelta

    client, specs = modelplug_setup(url, fail_share, streams, pool)
    notices: list[str] = []

    async def one(spec: str) -> int:
        count = 0
        async for event in client.astream(spec, "hi"):
            kind = type(event)
            if kind is TextDelta:
                count += 1
            elif kind is Notice:
                notices.append(event.kind)  # type: ignore[union-attr]
        return count

    # One call first, outside the timing: imports pydantic and the call path once, as
    # any long-running program has done before its 256 concurrent calls.
    await one(f"bench/{MODEL}")
    try:
        return await timed_gather(one(spec) for spec in specs)
    finally:
        await client.aclose()
        full = notices.count("http_pool_full")
        retries = len(notices) - full
        RESULT["notes"] = f"notices: {retries} retry, {full} pool full" if notices else ""


async def openai_reader(url: str, streams: int) -> int:
    import openai

    sdk = openai.AsyncOpenAI(base_url=url + "/v1", api_key="bench", max_retries=0)

    async def one() -> int:
        count = 0
        stream = await sdk.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=True
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                count += 1
        return count

    await one()
    try:
        return await timed_gather(one() for _ in range(streams))
    finally:
        await sdk.close()


async def litellm_reader(url: str, streams: int) -> int:
    import litellm

    async def one() -> int:
        count = 0
        stream = await litellm.acompletion(
            model=f"openai/{MODEL}",
            api_base=url + "/v1",
            api_key="bench",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                count += 1
        return count

    await one()
    return await timed_gather(one() for _ in range(streams))


RESULT: dict[str, Any] = {}


async def timed_gather(calls: Any) -> int:
    """Run the calls at once; record wall and CPU time and the RSS they added."""
    import urllib.request

    calls = list(calls)
    # The server holds every response until all of them are open (see Server).
    with urllib.request.urlopen(f"{RESULT['url']}/expect?n={len(calls)}", timeout=10):
        pass
    RESULT["rss_before"] = rss_now_mb()
    started, cpu = time.perf_counter(), time.process_time()
    counts = await asyncio.gather(*calls)
    RESULT["wall"] = time.perf_counter() - started
    RESULT["cpu"] = time.process_time() - cpu
    return sum(counts)


def rss_now_mb() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


READERS = {
    "raw httpx2": lambda url, n: raw_reader(url, n),
    "modelplug": lambda url, n: modelplug_reader(url, n),
    "modelplug + 10% retried": lambda url, n: modelplug_reader(url, n, 0.1),
    "modelplug, pool of 100": lambda url, n: modelplug_reader(url, n, pool=100),
    "AsyncOpenAI": lambda url, n: openai_reader(url, n),
    "litellm.acompletion": lambda url, n: litellm_reader(url, n),
}
MODULE_OF = {"AsyncOpenAI": "openai", "litellm.acompletion": "litellm"}


def run_reader(name: str, url: str, streams: int, chunks: int) -> None:
    """One reader in this process: print its figures as JSON."""
    RESULT["url"] = url
    events = asyncio.run(READERS[name](url, streams))
    if events != streams * chunks:
        raise SystemExit(f"{name} saw {events} text events, expected {streams * chunks}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    RESULT.update(events=events, peak_rss=peak)
    print(json.dumps(RESULT))


def interpreter_for(name: str, peers: str | None) -> str | None:
    module = MODULE_OF.get(name)
    for python in (sys.executable, peers):
        if python is None:
            continue
        if module is None and python == sys.executable:
            return python
        probe = f"import importlib.util as u, sys; sys.exit(u.find_spec({module!r}) is None)"
        if module and subprocess.run([python, "-c", probe], capture_output=True).returncode == 0:
            return python
    return None


def one_round(name: str, python: str, url: str, streams: int, chunks: int) -> dict[str, Any]:
    server_peak(url)  # reset
    out = subprocess.run(
        [
            python,
            __file__,
            "--reader",
            name,
            "--url",
            url,
            "--streams",
            str(streams),
            "--chunks",
            str(chunks),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "MODELPLUG_CONFIG": os.devnull},
    )
    if out.returncode:
        raise SystemExit(f"{name} failed:\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result["open_at_once"] = server_peak(url)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=256)
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--litellm-streams", type=int, default=32)
    parser.add_argument("--peers-python", default=str(PEERS) if PEERS.exists() else None)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--reader", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.chunks))
        return 0
    if args.reader:
        run_reader(args.reader, args.url, args.streams, args.chunks)
        return 0
    process, url = start_server(args.chunks)
    try:
        return report(args, url)
    finally:
        process.kill()
        process.wait()


def report(args: argparse.Namespace, url: str) -> int:
    pythons = {name: interpreter_for(name, args.peers_python) for name in READERS}
    print(
        f"{args.streams} concurrent streams x {args.chunks:,} chunks from one client, "
        f"median of {args.repeat} alternating rounds (fresh process each)"
    )
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name, py in pythons.items() if py}
    for name, python in pythons.items():
        if python is None:
            print(f"  {name}: skipped (not installed; see --peers-python)")
    for _ in range(args.repeat):
        for name in runs:
            streams = args.litellm_streams if name.startswith("litellm") else args.streams
            if name.startswith("litellm") and len(runs[name]) >= 1:
                continue  # one round: it takes minutes
            runs[name].append(one_round(name, pythons[name] or "", url, streams, args.chunks))
    rates: dict[str, float] = {}
    cpu_rates: dict[str, float] = {}
    for name, results in runs.items():
        rate = statistics.median(r["events"] / r["wall"] for r in results)
        cpu = statistics.median(r["cpu"] / r["events"] * 1e6 for r in results)
        cpu_rates[name] = 1e6 / cpu
        streams = args.litellm_streams if name.startswith("litellm") else args.streams
        per_stream = statistics.median(
            (r["peak_rss"] - r["rss_before"]) * 1024 / streams for r in results
        )
        peak = max(r["open_at_once"] for r in results)
        rates[name] = rate
        notes = results[-1].get("notes", "")
        print(
            f"  {name:<24} {rate:11,.0f} events/s  {cpu:6.2f} us CPU/event  "
            f"{peak:3d}/{streams} open at once  {per_stream:6.1f} KB/stream  {notes}"
        )
    # Wall-clock rates follow whatever else the machine runs; events per CPU second of
    # the client process are the steady measure of the client's own throughput.
    for label, table in (("events/s of wall time", rates), ("events per CPU second", cpu_rates)):
        print(f"ratios, {label} (this run):")
        raw = table.get("raw httpx2")
        for name in ("modelplug", "modelplug + 10% retried"):
            if name in table and raw:
                ratio = table[name] / raw
                verdict = "ok" if ratio >= 0.85 else "MISSED"
                print(f"  {name + ' / raw httpx2':<36} {ratio:6.2f}x  [>= 0.85x]  {verdict}")
        for peer in ("AsyncOpenAI", "litellm.acompletion"):
            if peer in table and "modelplug" in table:
                print(f"  {'modelplug / ' + peer:<36} {table['modelplug'] / table[peer]:6.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
