"""Reading a ConverseStream: what a text delta costs modelplug-bedrock, and how much of
it is botocore's event-stream parser.

    python bench/bedrock_eventstream.py [--frames 20000] [--repeat 5]

The stream is N contentBlockDelta text events (payloads shaped like the recorded ones
in plugins/modelplug-bedrock/tests/recorded, with their ``p`` padding), framed with both
CRCs. It is fed two ways: one frame per network read (as Bedrock flushes them) and in
16 KiB reads. Two readers: botocore's parser alone, as the plugin feeds it
(``modelplug_bedrock.stream.Frames``: both CRCs, the lengths, the headers), and the
plugin's whole reading (``Frames`` then ``Reader``: one JSON parse and the TextDelta).
Time is this process's CPU time, the best of ``--repeat`` rounds. Printed: microseconds
per frame for each.
"""

from __future__ import annotations

import argparse
import gc
import json
import struct
import time
import zlib
from collections.abc import Callable

from modelplug.contract.types import Endpoint, Request, Route
from modelplug_bedrock.stream import Frames, Reader

HEADERS = {":event-type": "contentBlockDelta", ":content-type": "application/json"}
ROUTE = Route(provider="bedrock", model="m", endpoint=Endpoint(type="bedrock"))
REQUEST = Request(messages=[{"role": "user", "content": "hi"}])


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    head = bytearray()
    for name, value in {**headers, ":message-type": "event"}.items():
        key, text = name.encode(), value.encode()
        head += bytes([len(key)]) + key + b"\x07" + struct.pack(">H", len(text)) + text
    prelude = struct.pack(">II", 12 + len(head) + len(payload) + 4, len(head))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + bytes(head) + payload
    return body + struct.pack(">I", zlib.crc32(body))


def stream_of(count: int) -> list[bytes]:
    return [
        frame(
            HEADERS,
            json.dumps(
                {"contentBlockIndex": 0, "delta": {"text": f" token{i}"}, "p": "abcdefghijklmnop"}
            ).encode(),
        )
        for i in range(count)
    ]


def parser_only(chunks: list[bytes]) -> int:
    frames = Frames()
    count = 0
    for chunk in chunks:
        whole, refused = frames.feed(chunk)
        assert refused is None, refused
        count += len(whole)
    return count


def whole_reading(chunks: list[bytes]) -> int:
    frames = Frames()
    reader = Reader(ROUTE, REQUEST)
    count = 0
    for chunk in chunks:
        whole, refused = frames.feed(chunk)
        assert refused is None, refused
        for one in whole:
            count += len(reader.frame(one))
    return count


def best_of(
    read: Callable[[list[bytes]], int], chunks: list[bytes], want: int, rounds: int
) -> float:
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        start = time.process_time()
        got = read(chunks)
        took = time.process_time() - start
        assert got == want, f"read {got} of {want}"
        best = min(best, took)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    frames = stream_of(args.frames)
    data = b"".join(frames)
    ways = {
        "one frame per read": frames,
        "16 KiB reads": [data[i : i + 16384] for i in range(0, len(data), 16384)],
    }
    print(f"{args.frames:,} text-delta frames ({len(data) / 1e6:.1f} MB), best of {args.repeat}")
    for way, chunks in ways.items():
        alone = best_of(parser_only, chunks, args.frames, args.repeat)
        whole = best_of(whole_reading, chunks, args.frames, args.repeat)
        print(
            f"  {way:20s} botocore's parser {alone / args.frames * 1e6:6.2f} us/frame, "
            f"whole reading {whole / args.frames * 1e6:6.2f} us/frame"
        )


if __name__ == "__main__":
    main()
