"""Streaming cost on the user's path: a plain ``Client()`` with every plugin of the
repository installed and enabled (the fallback policy wrapping every stream, prices,
textcalls, anthropic, openai-compat, openai, ollama) against raw httpx2 loops and the
openai SDK, all reading the same loopback servers in one run.

    python bench/stream.py [--events 20000 50000] [--repeat 7] [--only chat responses ollama]
                           [--peers-python PATH]

Three wires, each from its own loopback server streaming N text events in large writes,
so the cost measured is the client's, not the network's; the servers run in their own
processes:

- chat: N Chat Completions chunks (one text delta each), a usage chunk and [DONE],
  read by modelplug-openai-compat;
- responses: the Responses API (``POST /v1/responses``): created, the item and part,
  N ``response.output_text.delta`` events framed as OpenAI frames them (an ``event:``
  line, then the data), the done events and ``response.completed`` with usage, read by
  modelplug-openai (issue 16);
- ollama: Ollama's native ``/api/chat``: N NDJSON lines (one text line each), then the
  ``done: true`` line with the counts, read by modelplug-ollama (issue 18).

Time is this process's CPU time (``time.process_time``): on a shared machine it is far
steadier than wall time, and the client's work is what is being compared. For each size
every reader runs ``--repeat`` rounds, alternating, and each reader's median is kept.
Printed: microseconds per event and the ratios the targets are stated in, from this run:

- chat modelplug async / raw async httpx2 loop  (target <= 1.15x)
- chat modelplug sync  / raw sync httpx2 loop   (target <= 1.3x)
- responses and ollama, async / raw async loop  (the issues' target: <= 1.25x)
- responses and ollama, sync  / raw sync loop   (<= 1.5x)
- modelplug per event at the largest size / at the smallest (linear: about 1.0x)
- openai SDK      / modelplug, chat and responses (target >= 10x for chat)
- litellm         / modelplug, chat             (when installed here or in --peers-python)
- repetition guard on / off, modelplug async     (the guard's target: <= 1.03x)

Every delta's text is distinct (`` w0 w1 w2 ...``): a body that repeated itself would
be cut by the repetition guard, as a looping model is.

The raw loops are the honest minimum for their wire: read bytes, decode, split lines,
one json.loads per event, touch the text. ``python bench/stream_instructions.py`` counts
the same readers in instructions (callgrind), which a busy machine does not disturb.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MODEL = "bench-model"
PEERS = Path(__file__).resolve().parent / ".peers" / "bin" / "python"
# The async reader with the repetition guard off (repetition=False), beside the default.
GUARD_OFF = "modelplug async, guard off"


# ----------------------------------------------------------------------- the bodies


def chat_chunk(**fields: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1764460800,
        "model": MODEL,
        **fields,
    }


def make_chat_body(events: int) -> bytes:
    parts = []
    for i in range(events):
        delta = {"index": 0, "delta": {"content": f" w{i}"}, "finish_reason": None}
        chunk = chat_chunk(choices=[delta])
        parts.append(b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n")
    final = chat_chunk(choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}])
    usage = chat_chunk(
        choices=[],
        usage={"prompt_tokens": 10, "completion_tokens": events, "total_tokens": events + 10},
    )
    for extra in (final, usage):
        parts.append(b"data: " + json.dumps(extra).encode() + b"\n\n")
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def responses_event(event: dict[str, Any]) -> bytes:
    """One Responses API event as OpenAI frames it: its type on an ``event:`` line."""
    data = json.dumps(event, separators=(",", ":")).encode()
    return b"event: " + event["type"].encode() + b"\ndata: " + data + b"\n\n"


def make_responses_body(events: int) -> bytes:
    item = {"id": "msg_bench", "type": "message", "status": "in_progress", "role": "assistant"}
    at = {"item_id": "msg_bench", "output_index": 0, "content_index": 0}
    head: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "resp_bench", "model": MODEL}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
        {
            "type": "response.content_part.added",
            **at,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
    ]
    parts = [responses_event(event) for event in head]
    words = [f" w{i}" for i in range(events)]
    for i, word in enumerate(words):
        delta = {"type": "response.output_text.delta", "sequence_number": i + 3, **at}
        parts.append(responses_event({**delta, "delta": word, "logprobs": []}))
    done_item = {
        **item,
        "status": "completed",
        "content": [{"type": "output_text", "text": "".join(words), "annotations": []}],
    }
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": events,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": events + 10,
    }
    completed = {"id": "resp_bench", "model": MODEL, "status": "completed"}
    tail = [
        {"type": "response.output_item.done", "output_index": 0, "item": done_item},
        {
            "type": "response.completed",
            "response": {**completed, "output": [done_item], "usage": usage},
        },
    ]
    parts.extend(responses_event(event) for event in tail)
    return b"".join(parts)


def make_ollama_body(events: int) -> bytes:
    parts = []
    for i in range(events):
        line = {
            "model": MODEL,
            "created_at": "2025-12-01T08:00:00.000000Z",
            "message": {"role": "assistant", "content": f" w{i}"},
            "done": False,
        }
        parts.append(json.dumps(line, separators=(",", ":")).encode() + b"\n")
    final = {
        "model": MODEL,
        "created_at": "2025-12-01T08:00:01.000000Z",
        "message": {"role": "assistant", "content": ""},
        "done_reason": "stop",
        "done": True,
        "total_duration": 1_000_000_000,
        "load_duration": 1_000_000,
        "prompt_eval_count": 10,
        "prompt_eval_duration": 10_000_000,
        "eval_count": events,
        "eval_duration": 900_000_000,
    }
    parts.append(json.dumps(final, separators=(",", ":")).encode() + b"\n")
    return b"".join(parts)


# ------------------------------------------------------------ counting text per wire


def chat_texts(lines: list[str]) -> int:
    count = 0
    loads = json.loads
    for line in lines:
        if line.startswith("data:") and line != "data: [DONE]":
            event = loads(line[5:])
            choices = event.get("choices")
            if choices and choices[0]["delta"].get("content"):
                count += 1
    return count


def responses_texts(lines: list[str]) -> int:
    # The ``event:`` lines are skipped: the data's own "type" says the same.
    count = 0
    loads = json.loads
    for line in lines:
        if line.startswith("data:"):
            event = loads(line[5:])
            if event["type"] == "response.output_text.delta" and event["delta"]:
                count += 1
    return count


def ollama_texts(lines: list[str]) -> int:
    count = 0
    loads = json.loads
    for line in lines:
        if line and loads(line)["message"].get("content"):
            count += 1
    return count


# --------------------------------------------------------------------------- the wires


@dataclass(frozen=True)
class Wire:
    """One wire: what its server sends, what a raw loop asks and counts, and the
    provider a plain ``Client()`` reaches it through (``plugin`` serves it)."""

    name: str
    title: str
    path: str
    request: dict[str, Any]
    content_type: bytes
    make_body: Callable[[int], bytes]
    texts: Callable[[list[str]], int]
    plugin: str
    provider: Callable[[str], dict[str, Any]]
    targets: tuple[float, float]  # (async, sync) modelplug / raw


WIRES = {
    "chat": Wire(
        name="chat",
        title="Chat Completions chunks",
        path="/v1/chat/completions",
        request={
            "model": MODEL,
            "messages": [{"role": "user", "content": "hi"}],
            "stream": True,
            "stream_options": {"include_usage": True},
        },
        content_type=b"text/event-stream",
        make_body=make_chat_body,
        texts=chat_texts,
        plugin="modelplug-openai-compat",
        provider=lambda url: {"type": "openai-compatible", "base_url": url + "/v1"},
        targets=(1.15, 1.3),
    ),
    "responses": Wire(
        name="responses",
        title="Responses API text deltas",
        path="/v1/responses",
        request={"model": MODEL, "input": "hi", "stream": True, "store": False},
        content_type=b"text/event-stream",
        make_body=make_responses_body,
        texts=responses_texts,
        plugin="modelplug-openai",
        provider=lambda url: {
            "type": "openai-responses",
            "base_url": url + "/v1",
            "api_key_env": "BENCH_KEY",
        },
        targets=(1.25, 1.5),
    ),
    "ollama": Wire(
        name="ollama",
        title="Ollama /api/chat NDJSON lines",
        path="/api/chat",
        request={"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True},
        content_type=b"application/x-ndjson",
        make_body=make_ollama_body,
        texts=ollama_texts,
        plugin="modelplug-ollama",
        provider=lambda url: {"type": "ollama", "base_url": url},
        targets=(1.25, 1.5),
    ),
}


# ------------------------------------------------------------------ the loopback server


class Server:
    """HTTP/1.1 keep-alive server answering every POST with the same body."""

    def __init__(self, body: bytes, content_type: bytes) -> None:
        self.body = body
        self.head = b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n" % (
            content_type,
            len(body),
        )
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
        try:
            while self._read_request(reader):
                conn.sendall(self.head)
                view = memoryview(self.body)
                for start in range(0, len(view), 1 << 16):
                    conn.sendall(view[start : start + (1 << 16)])
        except OSError:
            return
        finally:
            conn.close()

    @staticmethod
    def _read_request(reader: Any) -> bool:
        """Read one request (line, headers, body); False when the client has gone."""
        if not reader.readline():
            return False
        length = 0
        while True:
            header = reader.readline()
            if header in (b"\r\n", b"\n", b""):
                break
            name, _, value = header.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        reader.read(length)
        return True


def start_server(events: int, wire: str = "chat") -> tuple[subprocess.Popen[str], str]:
    """The server runs in its own process so it never competes for this one's GIL."""
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", wire, "--events", str(events)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http://"):
        process.kill()
        raise SystemExit("the bench server did not start")
    return process, url


# ------------------------------------------------------------------------- the readers


class Lines:
    """Bytes in, whole decoded lines out; the unfinished last line is kept."""

    def __init__(self) -> None:
        self.decode = codecs.getincrementaldecoder("utf-8")().decode
        self.rest = ""

    def feed(self, chunk: bytes) -> list[str]:
        lines = (self.rest + self.decode(chunk)).split("\n")
        self.rest = lines.pop()
        return lines


def raw_sync(http: Any, url: str, wire: str = "chat") -> int:
    """The raw loop for ``wire`` over a sync httpx2 client: one json.loads per event."""
    spec = WIRES[wire]
    count, lines, texts = 0, Lines(), spec.texts
    with http.stream("POST", url + spec.path, json=spec.request) as response:
        for chunk in response.iter_bytes():
            count += texts(lines.feed(chunk))
    return count


async def raw_async(http: Any, url: str, wire: str = "chat") -> int:
    """The same loop over an async httpx2 client."""
    spec = WIRES[wire]
    count, lines, texts = 0, Lines(), spec.texts
    async with http.stream("POST", url + spec.path, json=spec.request) as response:
        async for chunk in response.aiter_bytes():
            count += texts(lines.feed(chunk))
    return count


async def _make_async_client() -> Any:
    import httpx2

    return httpx2.AsyncClient(timeout=60)


def modelplug_client(url: str, wire: str = "chat", *, alone: bool = False) -> Any:
    """The user's client: every installed plugin enabled, the bench server as provider
    ``bench``. ``alone``: only the wire's own plugin (a reference, not the user's path)."""
    from modelplug import Client

    spec = WIRES[wire]
    config: dict[str, Any] = {"providers": {"bench": spec.provider(url)}}
    if wire == "ollama":
        # No /api/show before the first call: the bench server answers every POST with
        # the stream.
        config["ollama"] = {"probe": False}
    return Client(
        enable=[spec.plugin] if alone else None, config=config, environ={"BENCH_KEY": "bench"}
    )


def modelplug_sync(client: Any) -> int:
    from modelplug.contract.types import TextDelta

    count = 0
    for event in client.stream(f"bench/{MODEL}", "hi"):
        if isinstance(event, TextDelta):
            count += 1
    return count


async def modelplug_async(client: Any, **fields: Any) -> int:
    from modelplug.contract.types import TextDelta

    count = 0
    async for event in client.astream(f"bench/{MODEL}", "hi", **fields):
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


def openai_responses_sync(url: str) -> int:
    import openai

    count = 0
    with openai.OpenAI(base_url=url + "/v1", api_key="bench", max_retries=0) as sdk:
        for event in sdk.responses.create(model=MODEL, input="hi", stream=True, store=False):
            if event.type == "response.output_text.delta" and event.delta:
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


# The peers run in their own interpreter (see ``peer``): per wire, (peer, label, rounds).
PEER_READERS: dict[str, Callable[[str], int]] = {
    "openai": openai_sync,
    "openai-responses": openai_responses_sync,
    "litellm": litellm_sync,
}
PEERS_OF = {
    "chat": [("openai", "openai SDK (sync)", 3), ("litellm", "litellm (sync)", 1)],
    "responses": [("openai-responses", "openai SDK (sync)", 3)],
    "ollama": [],
}


# ------------------------------------------------------------------------- the timing


def timed(events: int, run: Callable[[], int]) -> float:
    """One run's CPU time in microseconds per event."""
    gc.collect()
    started = time.process_time()
    count = run()
    elapsed = time.process_time() - started
    if count != events:
        raise SystemExit(f"a reader saw {count} text events, expected {events}")
    return elapsed / events * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, nargs="+", default=[20_000, 50_000])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", nargs="+", choices=list(WIRES), default=list(WIRES))
    parser.add_argument("--peers-python", default=str(PEERS) if PEERS.exists() else None)
    parser.add_argument("--serve", choices=list(WIRES), help=argparse.SUPPRESS)
    parser.add_argument("--peer", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        spec = WIRES[args.serve]
        server = Server(spec.make_body(args.events[0]), spec.content_type)
        print(server.url, flush=True)
        threading.Event().wait()
        return 0
    if args.peer:
        # One peer reader in this (possibly other) interpreter: print its median.
        run, n = PEER_READERS[args.peer], args.events[0]
        runs = [timed(n, lambda: run(args.url)) for _ in range(args.repeat)]
        print(json.dumps(statistics.median(runs)))
        return 0
    if args.repeat < 5:
        print("note: fewer than 5 rounds; the targets are stated for medians of >= 5")
    per_size: dict[int, dict[str, dict[str, float]]] = {}
    for n in args.events:
        with Servers(n, args.only) as urls:
            per_size[n] = measure(n, args.repeat, urls, args.peers_python)
        for wire, results in per_size[n].items():
            show(n, args.repeat, WIRES[wire], results)
    return summary(per_size)


class Servers:
    """One server process per wire for the ``with`` block: ``{wire: url}``."""

    def __init__(self, events: int, wires: list[str]) -> None:
        self.events, self.wires = events, wires
        self.processes: list[subprocess.Popen[str]] = []

    def __enter__(self) -> dict[str, str]:
        urls = {}
        for wire in self.wires:
            process, urls[wire] = start_server(self.events, wire)
            self.processes.append(process)
        return urls

    def __exit__(self, *exc: object) -> None:
        for process in self.processes:
            process.kill()
            process.wait()


def peer(name: str, n: int, url: str, python: str | None, repeat: int) -> float | None:
    """A peer's median in its own process (litellm needs the old httpx: peers venv)."""
    for candidate in (sys.executable, python):
        if candidate is None:
            continue
        module = name.split("-")[0]
        probe = f"import importlib.util as u, sys; sys.exit(u.find_spec({module!r}) is None)"
        if subprocess.run([candidate, "-c", probe], capture_output=True).returncode:
            continue
        command = [candidate, __file__, "--peer", name, "--url", url]
        out = subprocess.run(
            [*command, "--events", str(n), "--repeat", str(repeat)],
            capture_output=True,
            text=True,
            env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        )
        if out.returncode == 0:
            return float(out.stdout.strip().splitlines()[-1])
        print(f"  {name}: failed: {out.stderr.strip().splitlines()[-1:]}")
        return None
    return None


READER_NAMES = ("raw sync httpx2", "raw async httpx2", "modelplug sync", "modelplug async")


def measure(
    n: int, repeat: int, urls: dict[str, str], peers_python: str | None
) -> dict[str, dict[str, float]]:
    """Each wire's medians: its four readers alternate in the same rounds as the other
    wires' readers, then its peers run in their own processes."""
    with Readers(urls) as readers:
        # One warm-up call each (imports, pools), then rounds that interleave the readers
        # so that noise from other processes spreads over all of them; medians are kept.
        for run in readers.runs.values():
            run()
        runs: dict[tuple[str, str], list[float]] = {key: [] for key in readers.runs}
        for _ in range(repeat):
            for key, run in readers.runs.items():
                runs[key].append(timed(n, run))
    results: dict[str, dict[str, float]] = {wire: {} for wire in urls}
    for (wire, name), values in runs.items():
        results[wire][name] = statistics.median(values)
    for wire, url in urls.items():
        for name, label, rounds in PEERS_OF[wire]:
            micros = peer(name, n, url, peers_python, rounds)
            if micros is not None:
                results[wire][label] = micros
    return results


class Readers:
    """The four readers of every wire, keyed ``(wire, reader name)``. Every reader keeps
    its HTTP client (and pool) across rounds, as an application would: making one costs
    ~50 ms (TLS context), which is not per-event work. The two modelplug clients are the
    user's plain ``Client()``, one for the sync and one for the async calls, per wire."""

    def __init__(self, urls: dict[str, str]) -> None:
        self.urls = urls

    def __enter__(self) -> Readers:
        import httpx2

        self.loop = loop = asyncio.new_event_loop()
        self.raw_sync_http = httpx2.Client(timeout=60)
        self.raw_async_http = loop.run_until_complete(_make_async_client())
        self.sync_clients: list[Any] = []
        self.async_clients: list[Any] = []
        self.runs: dict[tuple[str, str], Callable[[], int]] = {}
        for wire, url in self.urls.items():
            self.add(wire, url)
        return self

    def add(self, wire: str, url: str) -> None:
        loop, raw_sync_http, raw_async_http = self.loop, self.raw_sync_http, self.raw_async_http
        sync_client, async_client = modelplug_client(url, wire), modelplug_client(url, wire)
        self.sync_clients.append(sync_client)
        self.async_clients.append(async_client)
        self.runs[(wire, "raw sync httpx2")] = lambda: raw_sync(raw_sync_http, url, wire)
        self.runs[(wire, "raw async httpx2")] = lambda: loop.run_until_complete(
            raw_async(raw_async_http, url, wire)
        )
        self.runs[(wire, "modelplug sync")] = lambda: modelplug_sync(sync_client)
        self.runs[(wire, "modelplug async")] = lambda: loop.run_until_complete(
            modelplug_async(async_client)
        )
        # The same calls with the repetition guard off: what the guard costs, same rounds.
        self.runs[(wire, GUARD_OFF)] = lambda: loop.run_until_complete(
            modelplug_async(async_client, repetition=False)
        )

    def __exit__(self, *exc: object) -> None:
        for client in self.sync_clients:
            client.close()
        for client in self.async_clients:
            self.loop.run_until_complete(client.aclose())
        self.loop.run_until_complete(self.raw_async_http.aclose())
        self.loop.close()
        self.raw_sync_http.close()


def show(n: int, repeat: int, wire: Wire, results: dict[str, float]) -> None:
    peers = ", ".join(
        f"{label.split(' (')[0]}: {rounds}" for _, label, rounds in PEERS_OF[wire.name]
    )
    print(
        f"{n:,} {wire.title} over loopback ({wire.plugin}), median of {repeat} alternating"
        f" rounds{f' ({peers})' if peers else ''}"
    )
    for name, micros in results.items():
        print(f"  {name:<20} {micros:7.2f} us/event")
    mp_sync, mp_async = results["modelplug sync"], results["modelplug async"]
    async_target, sync_target = wire.targets
    checks = [
        ("modelplug async / raw async", mp_async / results["raw async httpx2"], async_target, "<="),
        ("modelplug sync  / raw sync ", mp_sync / results["raw sync httpx2"], sync_target, "<="),
    ]
    sdk = results.get("openai SDK (sync)")
    if sdk is not None and wire.name == "chat":
        checks.append(("openai SDK      / modelplug", sdk / mp_sync, 10, ">="))
    for label, ratio, target, sense in checks:
        met = ratio <= target if sense == "<=" else ratio >= target
        print(f"  {label}  {ratio:5.2f}x  [{sense} {target}x]  {'ok' if met else 'MISSED'}")
    if sdk is not None and wire.name != "chat":
        print(f"  openai SDK      / modelplug  {sdk / mp_sync:5.2f}x  (for scale)")
    if GUARD_OFF in results:
        overhead = mp_async / results[GUARD_OFF] - 1
        print(
            f"  repetition guard on / off    {1 + overhead:5.3f}x  [<= 1.03x]  "
            f"{'ok' if overhead <= 0.03 else 'MISSED'}  (modelplug async)"
        )
    if "litellm (sync)" in results:
        print(f"  litellm         / modelplug  {results['litellm (sync)'] / mp_sync:5.2f}x")
    print()


def summary(per_size: dict[int, dict[str, dict[str, float]]]) -> int:
    if len(per_size) < 2:
        return 0
    small, large = min(per_size), max(per_size)
    print(f"linearity: us/event at {large:,} / at {small:,} (1.0 = linear)")
    for wire in per_size[large]:
        for name in READER_NAMES:
            ratio = per_size[large][wire][name] / per_size[small][wire][name]
            print(f"  {wire:<10} {name:<20} {ratio:5.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
