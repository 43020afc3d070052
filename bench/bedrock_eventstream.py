"""Reading a 10 MB ConverseStream: modelplug-bedrock's frame decoder against botocore's
``EventStreamBuffer`` on the same bytes, in the same run.

    python bench/bedrock_eventstream.py [--megabytes 10] [--chunk 16384] [--repeat 5]

The stream is messageStart, N contentBlockDelta text events (payloads shaped like the
recorded ones in plugins/modelplug-bedrock/tests/recorded, with their ``p`` padding),
contentBlockStop, messageStop and metadata, framed with both CRCs. Each reader is fed
the bytes in ``--chunk``-byte pieces, as the network hands them over, and cuts every
frame out (both CRCs checked, headers decoded, payload copied); the best of
``--repeat`` rounds is kept, the readers interleaved. Printed: both times, MB/s, and
the ratio modelplug / botocore (target: at most 1.0).
"""

from __future__ import annotations

import argparse
import gc
import json
import time

from botocore.eventstream import EventStreamBuffer
from modelplug_bedrock.eventstream import FrameDecoder, encode_frame

HEADERS = {":content-type": "application/json", ":message-type": "event"}


def stream_of(megabytes: float) -> tuple[bytes, int]:
    def event(name: str, payload: dict) -> bytes:
        return encode_frame({":event-type": name, **HEADERS}, json.dumps(payload).encode())

    frames = [event("messageStart", {"role": "assistant", "p": "abcdefgh"})]
    size, i = 0, 0
    while size < megabytes * 1_000_000:
        delta = {"contentBlockIndex": 0, "delta": {"text": f" token{i}"}, "p": "abcdefghijklmnop"}
        frame = event("contentBlockDelta", delta)
        frames.append(frame)
        size += len(frame)
        i += 1
    frames += [
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("messageStop", {"stopReason": "end_turn"}),
        event("metadata", {"usage": {"inputTokens": 1, "outputTokens": i}, "metrics": {}}),
    ]
    return b"".join(frames), len(frames)


def ours(chunks: list[bytes]) -> int:
    decoder = FrameDecoder()
    count = 0
    for chunk in chunks:
        count += len(decoder.feed(chunk))
    return count


def botocore(chunks: list[bytes]) -> int:
    buffer = EventStreamBuffer()
    count = 0
    for chunk in chunks:
        buffer.add_data(chunk)
        for _ in buffer:
            count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--megabytes", type=float, default=10.0)
    parser.add_argument("--chunk", type=int, default=16384)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    data, frames = stream_of(args.megabytes)
    chunks = [data[i : i + args.chunk] for i in range(0, len(data), args.chunk)]
    best = {"modelplug-bedrock": float("inf"), "botocore EventStreamBuffer": float("inf")}
    readers = {"modelplug-bedrock": ours, "botocore EventStreamBuffer": botocore}
    for _ in range(args.repeat):
        for name, read in readers.items():
            gc.collect()
            start = time.perf_counter()
            got = read(chunks)
            took = time.perf_counter() - start
            assert got == frames, f"{name} read {got} frames of {frames}"
            best[name] = min(best[name], took)
    mb = len(data) / 1e6
    print(f"{mb:.1f} MB, {frames} frames, {args.chunk}-byte chunks, best of {args.repeat}")
    for name, took in best.items():
        print(f"  {name:28s} {took * 1000:8.1f} ms  {mb / took:7.1f} MB/s")
    ratio = best["modelplug-bedrock"] / best["botocore EventStreamBuffer"]
    print(f"  ratio modelplug / botocore: {ratio:.2f}x (target <= 1.0)")


if __name__ == "__main__":
    main()
