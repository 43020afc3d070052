"""Instructions per streamed event, counted by valgrind's callgrind: repeatable where
wall and CPU time on a shared machine are not.

    python bench/stream_instructions.py [--events 10000]

Each reader of bench/stream.py (raw sync and async httpx2 loops, modelplug sync and
async, and the same four over the Responses API stream) runs in its own process under
callgrind twice, reading 1,000 and then 1,000 + N chunks from the loopback server
(which runs in a child process, not counted). The difference divided by N is the cost
of one event, free of start-up and set-up costs. Takes a few minutes; needs valgrind.
``--only chat`` or ``--only responses`` counts one wire's readers.
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
    elif reader == "raw sync responses":
        import httpx2
        b.raw_sync_responses(httpx2.Client(timeout=60), url)
    elif reader == "raw async responses":
        loop = asyncio.new_event_loop()
        http = loop.run_until_complete(b._make_async_client())
        loop.run_until_complete(b.raw_async_responses(http, url))
    elif reader == "responses sync":
        b.modelplug_sync(b.responses_client(url))
    elif reader == "responses async":
        loop = asyncio.new_event_loop()
        loop.run_until_complete(b.modelplug_async(b.responses_client(url)))
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
    "raw sync responses",
    "raw async responses",
    "responses sync",
    "responses async",
)


def instructions(script: Path, reader: str, events: int) -> int:
    return count_instructions([sys.executable, str(script), reader, str(events)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--only", choices=("chat", "responses"), help="one wire only")
    args = parser.parse_args()
    readers = [
        r for r in READERS if args.only is None or ("responses" in r) == (args.only == "responses")
    ]
    if not have_valgrind():
        print("valgrind is not installed: nothing to count (apt-get install valgrind)")
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "reader.py"
        script.write_text(READER.format(here=str(HERE)))
        per_event = {}
        for reader in readers:
            base = instructions(script, reader, 1_000)
            full = instructions(script, reader, 1_000 + args.events)
            per_event[reader] = (full - base) / args.events
            print(f"  {reader:<16} {per_event[reader]:9,.0f} instructions/event", flush=True)
    for prefix, raw in (("modelplug", ""), ("responses", " responses")):
        if f"{prefix} sync" not in per_event:
            continue
        sync_ratio = per_event[f"{prefix} sync"] / per_event[f"raw sync{raw}"]
        async_ratio = per_event[f"{prefix} async"] / per_event[f"raw async{raw}"]
        print(f"{prefix} sync  / raw sync   {sync_ratio:5.2f}x  [time target <= 1.5x]")
        print(f"{prefix} async / raw async  {async_ratio:5.2f}x  [time target <= 1.25x]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
