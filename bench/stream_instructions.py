"""Instructions per streamed event, counted by valgrind's callgrind: repeatable where
wall and CPU time on a shared machine are not.

    python bench/stream_instructions.py [--events 10000] [--only chat responses ollama]

Each reader of bench/stream.py, for each wire (chat: Chat Completions through
modelplug-openai-compat; responses: the Responses API through modelplug-openai; ollama:
Ollama's /api/chat NDJSON through modelplug-ollama): the raw sync and async httpx2
loops, modelplug sync and async through the user's plain ``Client()`` with every plugin
enabled, modelplug async with the repetition guard off (what the guard costs: target
<= 1.03x), and, for chat, for reference, modelplug async with only the openai-compat
plugin, which shows what the policies add. Each runs in its own process under callgrind
twice, reading 1,000 and then 1,000 + N events from the loopback server (which runs in a
child process, not counted), each time after a 200-event warm-up stream (the same in
both runs, so it cancels out) and a full collection (see GC_PHASE). The difference
divided by N is the cost of one event, free of start-up and set-up costs. Takes a few
minutes per wire; needs valgrind.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from callgrind import count_instructions, have_valgrind

HERE = Path(__file__).resolve().parent

READER = """
import asyncio, gc, sys
sys.path.insert(0, {here!r})
import stream as b
wire, reader, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

def read(url):
    if reader == "raw sync":
        import httpx2
        b.raw_sync(httpx2.Client(timeout=60), url, wire)
    elif reader == "raw async":
        loop = asyncio.new_event_loop()
        http = loop.run_until_complete(b._make_async_client())
        loop.run_until_complete(b.raw_async(http, url, wire))
    elif reader == "modelplug sync":
        b.modelplug_sync(b.modelplug_client(url, wire))
    else:
        alone = reader.endswith("only")
        fields = {{"repetition": False}} if reader.endswith("guard off") else {{}}
        loop = asyncio.new_event_loop()
        client = b.modelplug_client(url, wire, alone=alone)
        loop.run_until_complete(b.modelplug_async(client, **fields))

# A short stream first, so that what the first call imports and builds is done; then a
# full collection, so that the counted stream starts with the collector's generations
# empty in every run (see GC_PHASE).
proc, url = b.start_server({warm_up}, wire)
try:
    read(url)
finally:
    proc.kill()
gc.collect()
proc, url = b.start_server(n, wire)
try:
    read(url)
finally:
    proc.kill()
"""
# Events of the warm-up stream each run reads first (the same in both: it cancels out).
WARM_UP = 200
# GC_PHASE: without the warm-up and the collection, where Python's older generations
# stood when the counted stream began depended on everything the process had allocated
# before (a new plugin, a larger first call), and one full collection of the whole heap
# (~20 M instructions with every plugin loaded, sync) fell inside the 1,000 + N run and
# not inside the 1,000 one, or the other way round: +/- 2k "per event" at N = 10,000
# that no event caused. The timed bench (bench/stream.py) collects before each run too.

READERS = ("raw sync", "raw async", "modelplug sync", "modelplug async")
ALONE = "modelplug async, openai-compat only"
# The same async reader with the repetition guard off (repetition=False): its cost.
GUARD_OFF = "modelplug async, guard off"
# (modelplug sync / raw sync, modelplug async / raw async) instruction targets.
TARGETS = {"chat": (1.3, 1.15), "responses": (1.5, 1.25), "ollama": (1.5, 1.25)}


def instructions(script: Path, wire: str, reader: str, events: int) -> int:
    # One hash seed for every run: string hashes decide dict and set layouts, which
    # moved a reader's count by a few hundred instructions per event from run to run.
    environ = {**os.environ, "PYTHONHASHSEED": "0"}
    command = [sys.executable, str(script), wire, reader, str(events)]
    with tempfile.TemporaryDirectory() as scratch:
        environ["MODELPLUG_CONFIG"] = os.path.join(scratch, "none.toml")
        return count_instructions(command, env=environ, cwd=scratch)


def per_event(script: Path, wire: str, reader: str, events: int) -> float:
    base = instructions(script, wire, reader, 1_000)
    full = instructions(script, wire, reader, 1_000 + events)
    return (full - base) / events


def count_wire(script: Path, wire: str, events: int) -> dict[str, float]:
    readers = (*READERS, GUARD_OFF, ALONE) if wire == "chat" else (*READERS, GUARD_OFF)
    counts = {}
    for reader in readers:
        counts[reader] = per_event(script, wire, reader, events)
        print(f"  {wire:<10} {reader:<36} {counts[reader]:9,.0f} instructions/event", flush=True)
    return counts


def show(wire: str, counts: dict[str, float]) -> None:
    sync_target, async_target = TARGETS[wire]
    sync_ratio = counts["modelplug sync"] / counts["raw sync"]
    async_ratio = counts["modelplug async"] / counts["raw async"]
    print(f"{wire:<10} modelplug sync  / raw sync   {sync_ratio:5.2f}x  [target <= {sync_target}x]")
    print(
        f"{wire:<10} modelplug async / raw async  {async_ratio:5.2f}x  [target <= {async_target}x]"
    )
    guard = counts["modelplug async"] / counts[GUARD_OFF]
    print(f"{wire:<10} repetition guard on / off    {guard:5.3f}x  [target <= 1.03x]")
    if ALONE in counts:
        alone = counts[ALONE] / counts["raw async"]
        policies = counts["modelplug async"] - counts[ALONE]
        print(
            f"  openai-compat alone / raw async  {alone:5.2f}x; the policies add "
            f"{policies:,.0f} instructions per event (they hand the stream over)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--only", nargs="+", choices=list(TARGETS), default=list(TARGETS))
    args = parser.parse_args()
    if not have_valgrind():
        print("valgrind is not installed: nothing to count (apt-get install valgrind)")
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "reader.py"
        script.write_text(READER.format(here=str(HERE), warm_up=WARM_UP))
        counted = {wire: count_wire(script, wire, args.events) for wire in args.only}
    for wire, counts in counted.items():
        show(wire, counts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
