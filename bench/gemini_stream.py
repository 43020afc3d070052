"""Reading a Gemini stream: modelplug-gemini's parser against the bare minimum and
against google-genai's own response types, all on the same bytes in one run.

    python bench/gemini_stream.py [--events 20000] [--repeat 3]

The bytes are N ``alt=sse`` events of one text part each (the shape of
plugins/modelplug-gemini/tests/recorded/text.sse) and a final STOP event. No network:
what is measured is the reading, in this process's CPU time. Printed: microseconds per
event and the ratios (lower is better for modelplug):

- modelplug-gemini Parser / raw loop (SSEFramer + one json.loads + touch the text)
- google-genai (json.loads + GenerateContentResponse.model_validate + .text) / modelplug

and the import cost of what each path needs on first call (fresh interpreters).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable


def make_body(events: int) -> bytes:
    usage = {"promptTokenCount": 5, "candidatesTokenCount": 1, "totalTokenCount": 6}
    out = []
    for i in range(events):
        event = {
            "candidates": [
                {"content": {"parts": [{"text": f" w{i}"}], "role": "model"}, "index": 0}
            ],
            "usageMetadata": usage,
            "modelVersion": "gemini-2.5-flash",
            "responseId": "bench",
        }
        out.append(b"data: " + json.dumps(event).encode() + b"\r\n\r\n")
    last = {
        "candidates": [
            {
                "content": {"parts": [{"text": "."}], "role": "model"},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": usage,
    }
    out.append(b"data: " + json.dumps(last).encode() + b"\r\n\r\n")
    return b"".join(out)


def chunks_of(body: bytes, size: int = 16384) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def raw_loop(chunks: list[bytes]) -> int:
    from modelplug_kit import SSEFramer

    framer = SSEFramer()
    n = 0
    for chunk in chunks:
        for _, data in framer.feed(chunk):
            event = json.loads(data)
            n += len(event["candidates"][0]["content"]["parts"][0]["text"])
    return n


def modelplug_gemini(chunks: list[bytes]) -> int:
    from modelplug import Endpoint, Route
    from modelplug.contract.types import Request
    from modelplug_gemini.stream import Parser

    route = Route(provider="gemini", model="gemini-2.5-flash", endpoint=Endpoint(type="gemini"))
    parser = Parser(route, Request(messages=[{"role": "user", "content": "hi"}]))
    n = 0
    for chunk in chunks:
        n += len(parser.feed(chunk))
    parser.close()
    return n + len(parser.finish(0).response.text)


def google_genai(chunks: list[bytes]) -> int:
    from google.genai import types
    from modelplug_kit import SSEFramer

    framer = SSEFramer()
    n = 0
    for chunk in chunks:
        for _, data in framer.feed(chunk):
            response = types.GenerateContentResponse.model_validate(json.loads(data))
            n += len(response.text or "")
    return n


def best(fn: Callable[[list[bytes]], int], chunks: list[bytes], repeat: int) -> float:
    fn(chunks)  # warm: imports, caches
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn(chunks)
        times.append(time.process_time() - start)
    return min(times)


def import_cost(code: str) -> float:
    script = f"import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return float(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    chunks = chunks_of(make_body(args.events))
    per = 1e6 / (args.events + 1)
    raw = best(raw_loop, chunks, args.repeat)
    ours = best(modelplug_gemini, chunks, args.repeat)
    print(f"raw loop            {raw * per:7.2f} us/event")
    print(f"modelplug-gemini    {ours * per:7.2f} us/event   {ours / raw:.2f}x raw")
    try:
        sdk = best(google_genai, chunks, args.repeat)
    except ImportError:
        print("google-genai        not installed")
    else:
        print(f"google-genai types  {sdk * per:7.2f} us/event   {sdk / ours:.2f}x modelplug-gemini")
    ours_import = min(import_cost("import modelplug_gemini.stream") for _ in range(3))
    print(f"import modelplug_gemini.stream: {ours_import:.3f} s")
    try:
        sdk_import = min(import_cost("import google.genai") for _ in range(3))
    except subprocess.CalledProcessError:
        return
    print(f"import google.genai:            {sdk_import:.3f} s   {sdk_import / ours_import:.1f}x")


if __name__ == "__main__":
    main()
