"""Streaming cost of the anthropic plugin against the anthropic SDK on the same bytes.

    python bench/anthropic_stream.py [--events 20000] [--repeat 5] [--megabytes 10]

A loopback server (in its own process) answers every POST with one Messages API stream
of N ``text_delta`` events (``event:`` and ``data:`` lines, as the API writes them),
sent in large writes, so the cost measured is the client's. Time is this process's
CPU time. Readers, interleaved over rounds, best round kept:

- ``anthropic SDK raw events``: ``AsyncAnthropic.messages.create(stream=True)``, every
  event iterated as the SDK parses it (no accumulation): the SDK's own minimum;
- ``anthropic SDK MessageStream``: ``messages.stream()``, which accumulates a snapshot
  (what the plugin used before it read the bytes itself);
- ``modelplug async``: ``Client.astream("bench/...")`` through modelplug-anthropic.

Printed: microseconds per event at 1x and 4x the events and for a stream of about
``--megabytes`` MB, and the ratios the target is stated in: modelplug / SDK raw events
at most 1.2x, and linear (4x the events costs about 4x, so the per-event cost at 4x is
about the cost at 1x).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from stream import Server  # bench/ is on sys.path when run as a script

MODEL = "claude-bench"


DELTA_CHARS = 16  # characters of text (or JSON) per delta; set by --delta-chars
SHAPE = "text"  # "text": text_delta events; "tool": input_json_delta events of one call


def make_body(events: int) -> bytes:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        },
    }
    parts = [_event(start), _event(_block_start())]
    filler = "x" * max(0, DELTA_CHARS - 4)
    if SHAPE == "tool":
        parts.append(_event(_delta({"type": "input_json_delta", "partial_json": '{"a": "'})))
    for i in range(events):
        piece = f" w{i % 97:02d}{filler}"[:DELTA_CHARS]
        if SHAPE == "tool":
            parts.append(_event(_delta({"type": "input_json_delta", "partial_json": piece})))
        else:
            parts.append(_event(_delta({"type": "text_delta", "text": piece})))
    if SHAPE == "tool":
        parts.append(_event(_delta({"type": "input_json_delta", "partial_json": '"}'})))
    parts.append(_event({"type": "content_block_stop", "index": 0}))
    parts.append(
        _event(
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": "tool_use" if SHAPE == "tool" else "end_turn",
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": events},
            }
        )
    )
    parts.append(_event({"type": "message_stop"}))
    return b"".join(parts)


def _block_start() -> dict[str, Any]:
    if SHAPE == "tool":
        block: dict[str, Any] = {"type": "tool_use", "id": "toolu_bench", "name": "f", "input": {}}
    else:
        block = {"type": "text", "text": ""}
    return {"type": "content_block_start", "index": 0, "content_block": block}


def _delta(delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": 0, "delta": delta}


def _event(data: dict[str, Any]) -> bytes:
    body = json.dumps(data, separators=(",", ":"))
    return f"event: {data['type']}\ndata: {body}\n\n".encode()


def events_for_megabytes(megabytes: float) -> int:
    per_event = len(make_body(1000)) / 1000
    return int(megabytes * 1_000_000 / per_event)


def start_server(events: int) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            *(sys.executable, __file__, "--serve", "--events", str(events)),
            *("--delta-chars", str(DELTA_CHARS), "--shape", SHAPE),
        ],
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


async def sdk_raw(sdk: Any) -> int:
    count = 0
    stream = await sdk.messages.create(
        model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "hi"}], stream=True
    )
    async for event in stream:
        if event.type == "content_block_delta":
            count += 1
    return count - 2 if SHAPE == "tool" else count


async def sdk_message_stream(sdk: Any) -> int:
    count = 0
    async with sdk.messages.stream(
        model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        async for event in stream:
            if event.type == "content_block_delta":
                count += 1
        await stream.get_final_message()
    return count - 2 if SHAPE == "tool" else count


async def modelplug_async(client: Any) -> int:
    from modelplug.contract.types import Done, TextDelta

    count = 0
    async for event in client.astream(f"bench/{MODEL}", "hi", cache=False):
        if type(event) is TextDelta:
            count += 1
        elif type(event) is Done and SHAPE == "tool":
            (call,) = event.response.tool_calls
            count = len(call.input["a"]) // DELTA_CHARS  # type: ignore[index]
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


def measure(n: int, repeat: int, with_message_stream: bool) -> dict[str, float]:
    import anthropic
    import httpx2
    from modelplug import Client

    process, url = start_server(n)
    loop = asyncio.new_event_loop()
    try:
        http = httpx2.AsyncClient(timeout=120)
        sdk = anthropic.AsyncAnthropic(
            api_key="bench", base_url=url, http_client=http, max_retries=0
        )
        client = Client(
            enable=["modelplug-anthropic"],
            entry_points=True,
            config={"providers": {"bench": {"type": "anthropic", "base_url": url}}},
            environ={"ANTHROPIC_API_KEY": "bench"},
        )
        readers: dict[str, Callable[[], int]] = {
            "anthropic SDK raw events": lambda: loop.run_until_complete(sdk_raw(sdk)),
            "modelplug async": lambda: loop.run_until_complete(modelplug_async(client)),
        }
        if with_message_stream:
            readers["anthropic SDK MessageStream"] = lambda: loop.run_until_complete(
                sdk_message_stream(sdk)
            )
        results = dict.fromkeys(readers, float("inf"))
        for _ in range(repeat):
            for name, run in readers.items():
                results[name] = min(results[name], timed(n, run))
        loop.run_until_complete(client.aclose())
        loop.run_until_complete(http.aclose())
        return results
    finally:
        loop.close()
        process.kill()
        process.wait()


def main() -> int:
    global DELTA_CHARS, SHAPE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--megabytes", type=float, default=10.0)
    parser.add_argument("--message-stream", action="store_true", help="also time messages.stream()")
    parser.add_argument("--delta-chars", type=int, default=16)
    parser.add_argument("--shape", choices=("text", "tool"), default="text")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    DELTA_CHARS, SHAPE = args.delta_chars, args.shape
    if args.serve:
        server = Server(make_body(args.events), b"text/event-stream")
        print(server.url, flush=True)
        threading.Event().wait()
        return 0
    sizes = {
        "1x": args.events,
        "4x": 4 * args.events,
        f"{args.megabytes:g} MB": events_for_megabytes(args.megabytes),
    }
    table: dict[str, dict[str, float]] = {}
    for label, n in sizes.items():
        repeat = args.repeat if label == "1x" else max(2, args.repeat // 2)
        table[label] = measure(n, repeat, args.message_stream)
    print(
        f"anthropic Messages API stream over loopback ({SHAPE} deltas of {DELTA_CHARS} chars),"
        " CPU us/event (best round)"
    )
    for label, n in sizes.items():
        row = "  ".join(f"{name} {us:6.2f}" for name, us in table[label].items())
        body_mb = len(make_body(n)) / 1e6 if n < 200_000 else n * len(make_body(1000)) / 1e9
        print(f"  {label:>6} ({n:,} events, {body_mb:.1f} MB): {row}")
    print("ratios:")
    for label in sizes:
        ratio = table[label]["modelplug async"] / table[label]["anthropic SDK raw events"]
        verdict = "ok" if ratio <= 1.2 else "MISSED"
        print(f"  {label:>6}  modelplug / SDK raw events  {ratio:5.2f}x  [<= 1.2x]  {verdict}")
    one, four = table["1x"]["modelplug async"], table["4x"]["modelplug async"]
    growth = four * 4 / one
    print(f"  4x the events cost {growth:4.1f}x the CPU (linear: about 4x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
