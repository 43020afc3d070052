"""Streaming cost on the user's path: a plain ``Client()`` with every plugin of the
repository installed and enabled (the fallback policy wrapping every stream, prices,
textcalls, anthropic, openai-compat) against a raw httpx2 loop and the openai SDK, all
reading the same loopback server in one run.

    python bench/stream.py [--events 20000 50000] [--repeat 7] [--peers-python PATH]

A loopback server streams N Chat Completions chunks (one text delta each) plus a usage
chunk and [DONE], in large writes, so the cost measured is the client's, not the
network's; the server runs in its own process. Time is this process's CPU time
(``time.process_time``): on a shared machine it is far steadier than wall time, and the
client's work is what is being compared. For each size the readers run ``--repeat``
rounds, alternating, and each reader's median is kept. Printed: microseconds per event
and the ratios the targets are stated in, from this run:

- modelplug async / raw async httpx2 loop  (target <= 1.15x)
- modelplug sync  / raw sync httpx2 loop   (target <= 1.3x)
- modelplug per event at the largest size / at the smallest (linear: about 1.0x)
- openai SDK      / modelplug              (target >= 10x)
- litellm         / modelplug              (when installed here or in --peers-python)

The raw loops are the honest minimum: read bytes, decode, split lines, one json.loads
per event, touch the delta. ``python bench/stream_instructions.py`` counts the same
readers in instructions (callgrind), which a busy machine does not disturb.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import gc
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MODEL = "bench-model"
PEERS = Path(__file__).resolve().parent / ".peers" / "bin" / "python"


# ------------------------------------------------------------------ the loopback server


def make_body(events: int) -> bytes:
    parts = []
    for i in range(events):
        chunk = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1764460800,
            "model": MODEL,
            "choices": [{"index": 0, "delta": {"content": f" w{i % 97}"}, "finish_reason": None}],
        }
        parts.append(b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n")
    final = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1764460800,
        "model": MODEL,
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
    usage = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1764460800,
        "model": MODEL,
        "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": events, "total_tokens": events + 10},
    }
    for extra in (final, usage):
        parts.append(b"data: " + json.dumps(extra).encode() + b"\n\n")
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


class Server:
    """HTTP/1.1 keep-alive server answering every POST with the same SSE body."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        head = (
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"content-length: %d\r\n\r\n" % len(self.body)
        )
        try:
            while True:
                line = reader.readline()
                if not line:
                    return
                length = 0
                while True:
                    header = reader.readline()
                    if header in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = header.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                reader.read(length)
                conn.sendall(head)
                view = memoryview(self.body)
                for start in range(0, len(view), 1 << 16):
                    conn.sendall(view[start : start + (1 << 16)])
        except OSError:
            return
        finally:
            conn.close()


# ------------------------------------------------------------------------- the readers

REQUEST = {
    "model": MODEL,
    "messages": [{"role": "user", "content": "hi"}],
    "stream": True,
    "stream_options": {"include_usage": True},
}


def raw_sync(http: Any, url: str) -> int:
    count = 0
    loads = json.loads
    with http.stream("POST", url + "/v1/chat/completions", json=REQUEST) as response:
        decode = codecs.getincrementaldecoder("utf-8")().decode
        rest = ""
        for chunk in response.iter_bytes():
            lines = (rest + decode(chunk)).split("\n")
            rest = lines.pop()
            for line in lines:
                if line.startswith("data:") and line != "data: [DONE]":
                    event = loads(line[5:])
                    choices = event.get("choices")
                    if choices and choices[0]["delta"].get("content"):
                        count += 1
    return count


async def raw_async(http: Any, url: str) -> int:
    count = 0
    loads = json.loads
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


async def _make_async_client() -> Any:
    import httpx2

    return httpx2.AsyncClient(timeout=60)


def modelplug_client(url: str, *, alone: bool = False) -> Any:
    """The user's client: every installed plugin enabled, the bench server as a provider.
    ``alone``: only the openai-compat plugin (a reference, not the user's path)."""
    from modelplug import Client

    return Client(
        enable=["modelplug-openai-compat"] if alone else None,
        config={"providers": {"bench": {"type": "openai-compatible", "base_url": url + "/v1"}}},
        environ={},
    )


def modelplug_sync(client: Any) -> int:
    from modelplug.types import TextDelta

    count = 0
    for event in client.stream(f"bench/{MODEL}", "hi"):
        if isinstance(event, TextDelta):
            count += 1
    return count


async def modelplug_async(client: Any) -> int:
    from modelplug.types import TextDelta

    count = 0
    async for event in client.astream(f"bench/{MODEL}", "hi"):
        if isinstance(event, TextDelta):
            count += 1
    return count


def openai_sync(url: str) -> int:
    import openai

    count = 0
    with openai.OpenAI(base_url=url + "/v1", api_key="bench", max_retries=0) as sdk:
        stream = sdk.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                count += 1
    return count


def litellm_sync(url: str) -> int:
    import litellm

    count = 0
    stream = litellm.completion(
        model=f"openai/{MODEL}",
        api_base=url + "/v1",
        api_key="bench",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            count += 1
    return count


def timed(events: int, run: Callable[[], int]) -> float:
    """One run's CPU time in microseconds per event."""
    gc.collect()
    started = time.process_time()
    count = run()
    elapsed = time.process_time() - started
    if count != events:
        raise SystemExit(f"a reader saw {count} text events, expected {events}")
    return elapsed / events * 1e6


def start_server(events: int) -> tuple[subprocess.Popen[str], str]:
    """The server runs in its own process so it never competes for this one's GIL."""
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--events", str(events)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http://"):
        process.kill()
        raise SystemExit("the bench server did not start")
    return process, url


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, nargs="+", default=[20_000, 50_000])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--peers-python", default=str(PEERS) if PEERS.exists() else None)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--peer", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        server = Server(make_body(args.events[0]))
        print(server.url, flush=True)
        threading.Event().wait()
        return 0
    if args.peer:
        # One peer reader in this (possibly other) interpreter: print its median.
        run = {"openai": openai_sync, "litellm": litellm_sync}[args.peer]
        n = args.events[0]
        runs = [timed(n, lambda: run(args.url)) for _ in range(args.repeat)]
        print(json.dumps(statistics.median(runs)))
        return 0
    if args.repeat < 5:
        print("note: fewer than 5 rounds; the targets are stated for medians of >= 5")
    per_size: dict[int, dict[str, float]] = {}
    for n in args.events:
        process, url = start_server(n)
        try:
            per_size[n] = measure(n, args.repeat, url, args.peers_python)
        finally:
            process.kill()
            process.wait()
        show(n, args.repeat, per_size[n])
    return summary(per_size)


def peer(name: str, n: int, url: str, python: str | None, repeat: int) -> float | None:
    """A peer's median in its own process (litellm needs the old httpx: peers venv)."""
    for candidate in (sys.executable, python):
        if candidate is None:
            continue
        probe = f"import importlib.util as u, sys; sys.exit(u.find_spec({name!r}) is None)"
        if subprocess.run([candidate, "-c", probe], capture_output=True).returncode:
            continue
        out = subprocess.run(
            [
                candidate,
                __file__,
                "--peer",
                name,
                "--url",
                url,
                "--events",
                str(n),
                "--repeat",
                str(repeat),
            ],
            capture_output=True,
            text=True,
            env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        )
        if out.returncode == 0:
            return float(out.stdout.strip().splitlines()[-1])
        print(f"  {name}: failed: {out.stderr.strip().splitlines()[-1:]}")
        return None
    return None


def measure(n: int, repeat: int, url: str, peers_python: str | None) -> dict[str, float]:
    import httpx2

    # Every reader keeps its HTTP client (and pool) across rounds, as an application
    # would: making one costs ~50 ms (TLS context), which is not per-event work.
    loop = asyncio.new_event_loop()
    raw_sync_http = httpx2.Client(timeout=60)
    raw_async_http = loop.run_until_complete(_make_async_client())
    sync_client = modelplug_client(url)
    async_client = modelplug_client(url)
    readers: dict[str, Callable[[], int]] = {
        "raw sync httpx2": lambda: raw_sync(raw_sync_http, url),
        "raw async httpx2": lambda: loop.run_until_complete(raw_async(raw_async_http, url)),
        "modelplug sync": lambda: modelplug_sync(sync_client),
        "modelplug async": lambda: loop.run_until_complete(modelplug_async(async_client)),
    }
    # One warm-up call each (imports, pools), then rounds that interleave the readers
    # so that noise from other processes spreads over all of them; medians are kept.
    for run in readers.values():
        run()
    runs: dict[str, list[float]] = {name: [] for name in readers}
    for _ in range(repeat):
        for name, run in readers.items():
            runs[name].append(timed(n, run))
    sync_client.close()
    loop.run_until_complete(async_client.aclose())
    loop.run_until_complete(raw_async_http.aclose())
    loop.close()
    raw_sync_http.close()
    results = {name: statistics.median(values) for name, values in runs.items()}
    for name, label in (("openai", "openai SDK (sync)"), ("litellm", "litellm (sync)")):
        micros = peer(name, n, url, peers_python, 3 if name == "openai" else 1)
        if micros is not None:
            results[label] = micros
    return results


def show(n: int, repeat: int, results: dict[str, float]) -> None:
    print(
        f"{n:,} chat chunks over loopback, median of {repeat} alternating rounds"
        " (openai SDK: 3, litellm: 1)"
    )
    for name, micros in results.items():
        print(f"  {name:<20} {micros:7.2f} us/event")
    mp_sync, mp_async = results["modelplug sync"], results["modelplug async"]
    checks = [
        ("modelplug async / raw async", mp_async / results["raw async httpx2"], 1.15, "<="),
        ("modelplug sync  / raw sync ", mp_sync / results["raw sync httpx2"], 1.3, "<="),
    ]
    if "openai SDK (sync)" in results:
        checks.append(
            ("openai SDK      / modelplug", results["openai SDK (sync)"] / mp_sync, 10, ">=")
        )
    for label, ratio, target, sense in checks:
        met = ratio <= target if sense == "<=" else ratio >= target
        print(f"  {label}  {ratio:5.2f}x  [{sense} {target}x]  {'ok' if met else 'MISSED'}")
    if "litellm (sync)" in results:
        print(f"  litellm         / modelplug  {results['litellm (sync)'] / mp_sync:5.2f}x")
    print()


def summary(per_size: dict[int, dict[str, float]]) -> int:
    if len(per_size) < 2:
        return 0
    small, large = min(per_size), max(per_size)
    print(f"linearity: us/event at {large:,} / at {small:,} (1.0 = linear)")
    for name in ("raw sync httpx2", "raw async httpx2", "modelplug sync", "modelplug async"):
        print(f"  {name:<20} {per_size[large][name] / per_size[small][name]:5.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
