"""Streaming throughput: modelplug's OpenAI-compatible adapter against a raw httpx2 loop
and peer libraries, all reading the same loopback server in one run.

    python bench/stream.py [--events 50000] [--repeat 3]

A loopback server streams N Chat Completions chunks (one text delta each) plus a usage
chunk and [DONE], in large writes, so the cost measured is the client's, not the
network's; the server runs in its own process. Time is this process's CPU time
(``time.process_time``): on a shared machine it is far steadier than wall time, and
the client's work is what is being compared. Printed: microseconds per event for each
reader and the ratios the targets
are stated in (lower is better for modelplug):

- modelplug sync  / raw sync httpx2 loop   (target <= 1.5x)
- modelplug async / raw async httpx2 loop  (target <= 1.25x)
- openai SDK      / modelplug              (target >= 5x)
- litellm         / modelplug              (when installed)

The Responses case (modelplug-openai, ``POST /v1/responses``) streams the same number
of ``response.output_text.delta`` events, framed as OpenAI frames them (an ``event:``
line, then the data), and ends with ``response.completed``:

- responses async / raw async httpx2 loop  (target <= 1.25x)
- responses sync  / raw sync httpx2 loop   (target <= 1.5x)
- openai SDK responses.stream / modelplug  (for scale)

The raw loops are the honest minimum: read bytes, decode, split lines, one json.loads
per event, touch the delta.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import gc
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

MODEL = "bench-model"


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


def make_responses_body(events: int) -> bytes:
    """The same text as a Responses API stream: created, the item and part, N text
    deltas, the done events and response.completed with usage."""
    item = {"id": "msg_bench", "type": "message", "status": "in_progress", "role": "assistant"}
    head: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "resp_bench", "model": MODEL}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
        {
            "type": "response.content_part.added",
            "item_id": "msg_bench",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
    ]
    parts = [_sse(event) for event in head]
    words = []
    for i in range(events):
        word = f" w{i % 97}"
        words.append(word)
        delta = {
            "type": "response.output_text.delta",
            "sequence_number": i + 3,
            "item_id": "msg_bench",
            "output_index": 0,
            "content_index": 0,
            "delta": word,
            "logprobs": [],
        }
        parts.append(_sse(delta))
    text = "".join(words)
    done_item = {
        **item,
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": events,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": events + 10,
    }
    tail = [
        {"type": "response.output_item.done", "output_index": 0, "item": done_item},
        {
            "type": "response.completed",
            "response": {
                "id": "resp_bench",
                "model": MODEL,
                "status": "completed",
                "output": [done_item],
                "usage": usage,
            },
        },
    ]
    parts.extend(_sse(event) for event in tail)
    return b"".join(parts)


def _sse(event: dict[str, Any]) -> bytes:
    data = json.dumps(event, separators=(",", ":")).encode()
    return b"event: " + event["type"].encode() + b"\ndata: " + data + b"\n\n"


class Server:
    """HTTP/1.1 keep-alive server answering every POST with the same SSE body: the Chat
    Completions one, or the Responses one for ``/v1/responses``."""

    def __init__(self, body: bytes, responses_body: bytes = b"") -> None:
        self.body = body
        self.responses_body = responses_body
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
            while True:
                line = reader.readline()
                if not line:
                    return
                body = self.responses_body if b" /v1/responses " in line else self.body
                head = (
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"content-length: %d\r\n\r\n" % len(body)
                )
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
                view = memoryview(body)
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


RESPONSES_REQUEST = {"model": MODEL, "input": "hi", "stream": True, "store": False}


def raw_sync_responses(http: Any, url: str) -> int:
    count = 0
    loads = json.loads
    with http.stream("POST", url + "/v1/responses", json=RESPONSES_REQUEST) as response:
        decode = codecs.getincrementaldecoder("utf-8")().decode
        rest = ""
        for chunk in response.iter_bytes():
            lines = (rest + decode(chunk)).split("\n")
            rest = lines.pop()
            for line in lines:
                if line.startswith("data:"):
                    event = loads(line[5:])
                    if event["type"] == "response.output_text.delta" and event["delta"]:
                        count += 1
    return count


async def raw_async_responses(http: Any, url: str) -> int:
    count = 0
    loads = json.loads
    async with http.stream("POST", url + "/v1/responses", json=RESPONSES_REQUEST) as response:
        decode = codecs.getincrementaldecoder("utf-8")().decode
        rest = ""
        async for chunk in response.aiter_bytes():
            lines = (rest + decode(chunk)).split("\n")
            rest = lines.pop()
            for line in lines:
                if line.startswith("data:"):
                    event = loads(line[5:])
                    if event["type"] == "response.output_text.delta" and event["delta"]:
                        count += 1
    return count


def responses_client(url: str) -> Any:
    from modelplug import Client

    return Client(
        enable=["modelplug-openai"],
        entry_points=True,
        config={
            "providers": {
                "bench": {"type": "openai-responses", "base_url": url + "/v1", "api_key_env": "K"}
            }
        },
        environ={"K": "bench"},
    )


def openai_responses_sync(url: str) -> int:
    import openai

    count = 0
    with openai.OpenAI(base_url=url + "/v1", api_key="bench", max_retries=0) as sdk:
        stream = sdk.responses.create(model=MODEL, input="hi", stream=True)
        for event in stream:
            if event.type == "response.output_text.delta" and event.delta:
                count += 1
    return count


async def _make_async_client() -> Any:
    import httpx2

    return httpx2.AsyncClient(timeout=60)


def modelplug_client(url: str) -> Any:
    from modelplug import Client

    return Client(
        enable=["modelplug-openai-compat"],
        entry_points=True,
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
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    n, repeat = args.events, args.repeat
    if args.serve:
        server = Server(make_body(n), make_responses_body(n))
        print(server.url, flush=True)
        threading.Event().wait()
        return 0
    process, url = start_server(n)
    try:
        return report(n, repeat, url)
    finally:
        process.kill()
        process.wait()


def report(n: int, repeat: int, url: str) -> int:
    import httpx2

    # Every reader keeps its HTTP client (and pool) across rounds, as an application
    # would: making one costs ~50 ms (TLS context), which is not per-event work.
    loop = asyncio.new_event_loop()
    raw_sync_http = httpx2.Client(timeout=60)
    raw_async_http = loop.run_until_complete(_make_async_client())
    sync_client = modelplug_client(url)
    async_client = modelplug_client(url)
    responses_sync_client = responses_client(url)
    responses_async_client = responses_client(url)
    readers: dict[str, Callable[[], int]] = {
        "raw sync httpx2": lambda: raw_sync(raw_sync_http, url),
        "raw async httpx2": lambda: loop.run_until_complete(raw_async(raw_async_http, url)),
        "modelplug sync": lambda: modelplug_sync(sync_client),
        "modelplug async": lambda: loop.run_until_complete(modelplug_async(async_client)),
        "raw sync responses": lambda: raw_sync_responses(raw_sync_http, url),
        "raw async responses": lambda: loop.run_until_complete(
            raw_async_responses(raw_async_http, url)
        ),
        "responses sync": lambda: modelplug_sync(responses_sync_client),
        "responses async": lambda: loop.run_until_complete(modelplug_async(responses_async_client)),
    }
    # Rounds interleave the readers so that noise from other processes spreads over
    # all of them; each reader's best round is kept.
    results = dict.fromkeys(readers, float("inf"))
    for _ in range(repeat):
        for name, run in readers.items():
            results[name] = min(results[name], timed(n, run))
    sync_client.close()
    responses_sync_client.close()
    loop.run_until_complete(async_client.aclose())
    loop.run_until_complete(responses_async_client.aclose())
    loop.run_until_complete(raw_async_http.aclose())
    loop.close()
    raw_sync_http.close()
    results["openai SDK (sync)"] = min(timed(n, lambda: openai_sync(url)) for _ in range(2))
    results["openai SDK responses"] = min(
        timed(n, lambda: openai_responses_sync(url)) for _ in range(2)
    )
    litellm_note = None
    try:
        import litellm  # noqa: F401
    except ImportError:
        litellm_note = "litellm: not installed, skipped"
    else:
        results["litellm (sync)"] = timed(n, lambda: litellm_sync(url))

    print(f"{n:,} chat chunks over loopback, best of {repeat} interleaved rounds")
    for name, micros in results.items():
        print(f"  {name:<20} {micros:7.2f} us/event")
    mp_sync, mp_async = results["modelplug sync"], results["modelplug async"]
    print("ratios (targets in brackets):")
    sync_ratio = mp_sync / results["raw sync httpx2"]
    async_ratio = mp_async / results["raw async httpx2"]
    sdk_ratio = results["openai SDK (sync)"] / mp_sync
    print(
        f"  modelplug sync  / raw sync   {sync_ratio:5.2f}x  [<= 1.5x]"
        f"  {'ok' if sync_ratio <= 1.5 else 'MISSED'}"
    )
    print(
        f"  modelplug async / raw async  {async_ratio:5.2f}x  [<= 1.25x]"
        f"  {'ok' if async_ratio <= 1.25 else 'MISSED'}"
    )
    print(
        f"  openai SDK      / modelplug  {sdk_ratio:5.2f}x  [>= 5x]"
        f"  {'ok' if sdk_ratio >= 5 else 'MISSED'}"
    )
    responses_async_ratio = results["responses async"] / results["raw async responses"]
    responses_sync_ratio = results["responses sync"] / results["raw sync responses"]
    responses_sdk_ratio = results["openai SDK responses"] / results["responses sync"]
    print(
        f"  responses async / raw async  {responses_async_ratio:5.2f}x  [<= 1.25x]"
        f"  {'ok' if responses_async_ratio <= 1.25 else 'MISSED'}"
    )
    print(
        f"  responses sync  / raw sync   {responses_sync_ratio:5.2f}x  [<= 1.5x]"
        f"  {'ok' if responses_sync_ratio <= 1.5 else 'MISSED'}"
    )
    print(f"  openai SDK responses / modelplug  {responses_sdk_ratio:5.2f}x")
    if "litellm (sync)" in results:
        print(f"  litellm         / modelplug  {results['litellm (sync)'] / mp_sync:5.2f}x")
    if litellm_note:
        print(f"  {litellm_note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
