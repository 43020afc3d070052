"""Instructions per streamed event, counted by valgrind's callgrind: repeatable where
wall and CPU time on a shared machine are not.

    python bench/stream_instructions.py [--events 10000]

Each reader of bench/stream.py (raw sync and async httpx2 loops, modelplug sync and
async through the user's plain ``Client()`` with every plugin enabled, and, for
reference, modelplug async with only the openai-compat plugin, which shows what the
policies add) runs in its own process under callgrind twice, reading 1,000 and then
1,000 + N chunks from the loopback server (which runs in a child process, not counted).
The difference divided by N is the cost of one event, free of start-up and set-up
costs. Takes a few minutes; needs valgrind.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from callgrind import count_instructions, have_valgrind

HERE = Path(__file__).resolve().parent

READER = """
import asyncio, sys
sys.path.insert(0, {here!r})
import stream as b
reader, n = sys.argv[1], int(sys.argv[2])
proc, url = b.start_server(n)
try:
    if reader == "raw sync":
        import httpx2
        b.raw_sync(httpx2.Client(timeout=60), url)
    elif reader == "raw async":
        loop = asyncio.new_event_loop()
        http = loop.run_until_complete(b._make_async_client())
        loop.run_until_complete(b.raw_async(http, url))
    elif reader == "modelplug sync":
        b.modelplug_sync(b.modelplug_client(url))
    elif reader == "modelplug async, openai-compat only":
        loop = asyncio.new_event_loop()
        loop.run_until_complete(b.modelplug_async(b.modelplug_client(url, alone=True)))
    else:
        loop = asyncio.new_event_loop()
        loop.run_until_complete(b.modelplug_async(b.modelplug_client(url)))
finally:
    proc.kill()
"""

READERS = (
    "raw sync",
    "raw async",
    "modelplug sync",
    "modelplug async",
    "modelplug async, openai-compat only",
)


def instructions(script: Path, reader: str, events: int) -> int:
    return count_instructions([sys.executable, str(script), reader, str(events)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    args = parser.parse_args()
    if not have_valgrind():
        print("valgrind is not installed: nothing to count (apt-get install valgrind)")
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "reader.py"
        script.write_text(READER.format(here=str(HERE)))
        per_event = {}
        for reader in READERS:
            base = instructions(script, reader, 1_000)
            full = instructions(script, reader, 1_000 + args.events)
            per_event[reader] = (full - base) / args.events
            print(f"  {reader:<36} {per_event[reader]:9,.0f} instructions/event", flush=True)
    sync_ratio = per_event["modelplug sync"] / per_event["raw sync"]
    async_ratio = per_event["modelplug async"] / per_event["raw async"]
    alone = per_event["modelplug async, openai-compat only"] / per_event["raw async"]
    print(f"modelplug sync  / raw sync   {sync_ratio:5.2f}x  [target <= 1.3x]")
    print(f"modelplug async / raw async  {async_ratio:5.2f}x  [target <= 1.15x]")
    print(f"  of which openai-compat alone / raw async  {alone:5.2f}x (the rest: policies)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
