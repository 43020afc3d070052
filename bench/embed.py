"""Embedding cost on the user's path: 10,000 short inputs through a plain ``Client()``
(every installed plugin, the fallback and limits policies around the call) on an
OpenAI-compatible route, against the official openai SDK's ``embeddings.create`` on the
same loopback server, with the same batching, in one run.

    python bench/embed.py [--inputs 10000] [--dimensions 1536] [--batch 256]
                          [--concurrency 4] [--repeat 5]

The server (its own process, so its work is not counted) answers every
``POST /v1/embeddings`` with canned vectors of ``--dimensions`` floats, one per input
it was sent, as JSON floats (``encoding_format: float``: modelplug's default; the SDK
is asked for the same). modelplug splits the list itself (``server = "vllm"``: batches
of 256, ``embed_concurrency`` at once); the SDK is given the same batches, at most the
same number at once, by ``asyncio.gather`` under a semaphore.

Time is this process's CPU time (``time.process_time``), steadier than wall time on a
shared machine; wall time is printed beside it. Each client runs ``--repeat`` rounds,
alternating, and its median is kept. Printed: milliseconds per call of 10,000 inputs,
and the ratio openai SDK / modelplug.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import subprocess
import sys
import time
from typing import Any

MODEL = "bench-embed"


# ------------------------------------------------------------------------ the server


def vector(dimensions: int) -> str:
    # Values of the size a real model sends (about 20 characters each as JSON).
    return (
        "["
        + ",".join(f"{((i * 7919) % 2001 - 1000) / 31337.0:.17f}" for i in range(dimensions))
        + "]"
    )


def answer_body(count: int, dimensions: int, cache: dict[int, bytes]) -> bytes:
    body = cache.get(count)
    if body is None:
        one = vector(dimensions)
        items = ",".join(
            f'{{"object":"embedding","index":{i},"embedding":{one}}}' for i in range(count)
        )
        body = (
            f'{{"object":"list","data":[{items}],"model":"{MODEL}",'
            f'"usage":{{"prompt_tokens":{count * 3},"total_tokens":{count * 3}}}}}'
        ).encode()
        cache[count] = body
    return body


async def serve(dimensions: int) -> None:
    cache: dict[int, bytes] = {}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                sent = json.loads(await reader.readexactly(length))
                inputs = sent["input"]
                body = answer_body(
                    len(inputs) if isinstance(inputs, list) else 1, dimensions, cache
                )
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\n\r\n" % len(body)
                )
                writer.write(body)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


def start_server(dimensions: int) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--dimensions", str(dimensions)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    port = int(process.stdout.readline())
    return process, f"http://127.0.0.1:{port}"


# ------------------------------------------------------------------------ the clients


def modelplug_client(url: str, concurrency: int) -> Any:
    from modelplug import Client

    provider = {"type": "openai-compatible", "base_url": url + "/v1", "server": "vllm"}
    return Client(
        config={
            "providers": {"bench": provider},
            "openai-compat": {"embed_concurrency": concurrency},
        },
        environ={"BENCH_KEY": "bench"},
    )


async def modelplug_embed(client: Any, texts: list[str]) -> int:
    result = await client.aembed(f"bench/{MODEL}", texts)
    return len(result.vectors)


async def sdk_embed(sdk: Any, texts: list[str], batch: int, concurrency: int) -> int:
    room = asyncio.Semaphore(concurrency)

    async def one(chunk: list[str]) -> list[list[float]]:
        async with room:
            answer = await sdk.embeddings.create(model=MODEL, input=chunk, encoding_format="float")
            return [item.embedding for item in answer.data]

    parts = await asyncio.gather(*(one(texts[i : i + batch]) for i in range(0, len(texts), batch)))
    return sum(len(p) for p in parts)


def measure(run: Any) -> tuple[float, float]:
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=10_000)
    parser.add_argument("--dimensions", type=int, default=1536)
    parser.add_argument("--batch", type=int, default=256, help="inputs per request (vllm's)")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.dimensions))
        return

    import openai

    process, url = start_server(args.dimensions)
    texts = [f"short input number {i} about topic {i % 97}" for i in range(args.inputs)]
    try:
        loop = asyncio.new_event_loop()
        client = modelplug_client(url, args.concurrency)
        sdk = openai.AsyncOpenAI(base_url=url + "/v1", api_key="bench", max_retries=0)
        runs = {
            "modelplug Client.aembed": lambda: loop.run_until_complete(
                modelplug_embed(client, texts)
            ),
            "openai SDK embeddings.create": lambda: loop.run_until_complete(
                sdk_embed(sdk, texts, args.batch, args.concurrency)
            ),
        }
        for name, run in runs.items():  # warm up: connections, imports, caches
            got = loop.run_until_complete(asyncio.sleep(0, run()))
            assert got == args.inputs, f"{name} returned {got} vectors"
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        wall: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.repeat):
            for name, run in runs.items():
                c, w = measure(run)
                cpu[name].append(c)
                wall[name].append(w)
        loop.run_until_complete(sdk.close())
        client.close()
        loop.close()
    finally:
        process.terminate()
        process.wait()

    print(
        f"{args.inputs:,} inputs, {args.dimensions} floats each, batches of {args.batch}, "
        f"{args.concurrency} at once, median of {args.repeat}"
    )
    medians = {name: statistics.median(values) for name, values in cpu.items()}
    for name in runs:
        print(
            f"  {name:30} CPU {medians[name] * 1000:8.1f} ms   "
            f"wall {statistics.median(wall[name]) * 1000:8.1f} ms"
        )
    ratio = medians["openai SDK embeddings.create"] / medians["modelplug Client.aembed"]
    print(f"  openai SDK / modelplug (CPU): {ratio:.2f}x")


if __name__ == "__main__":
    main()
