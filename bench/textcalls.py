"""Holding text while streaming must cost O(output), not O(output²).

Delivers 100 KB and 200 KB replies in 1-character deltas through core's HeldText with
the modelplug-textcalls reader (the hook is called on every delta, as adapters do), in
whole and lines modes, with and without a call that stays held, and prints the time of
each (CPU seconds, best of five) and the ratio 200 KB / 100 KB. Linear cost gives
about 2; the target is <= 2.5.

Run from the repository root: ``python bench/textcalls.py`` (add ``--quick`` for
20/40 KB). Exits 1 when a ratio is over the target.

``--instructions`` counts each case's instructions under valgrind's callgrind instead, at
20 KB and 40 KB (callgrind runs some 50 times slower: about 10 minutes in all). Unlike
time on a shared machine, the count is the same from run to run, so a ratio over 2 is
the code's, not the load's.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import modelplug_textcalls
from callgrind import count_instructions, have_valgrind
from modelplug import Client
from modelplug.contract.types import ToolSpec

TARGET = 2.5
TOOLS = [ToolSpec(name="write_file"), ToolSpec(name="get_weather")]
PROSE_LINES = [
    "The weather in Paris is mild today, with a light breeze from the west.",
    "[1] See the forecast for details; {braces} and `code` stay text.",
    "  Indented prose line with <b>markup</b> in it.",
    "",
]


def prose(size: int) -> str:
    out: list[str] = []
    length = 0
    i = 0
    while length < size:
        line = PROSE_LINES[i % len(PROSE_LINES)] + "\n"
        out.append(line)
        length += len(line)
        i += 1
    return "".join(out)[:size]


def call(size: int) -> str:
    body = ('x = 1  # a line of a file being written, with "quotes"\n' * (size // 50 + 1))[:size]
    return json.dumps({"name": "write_file", "arguments": {"path": "a.py", "content": body}})


# Each case: (mode, build(size) -> reply, calls expected at the end)
CASES: dict[str, tuple[str, Callable[[int], str], int]] = {
    "whole, prose (nothing held)": ("whole", prose, 0),
    "whole, one held call": ("whole", call, 1),
    "lines, prose (nothing held)": ("lines", prose, 0),
    "lines, prose then a held call": (
        "lines",
        lambda n: prose(n // 2) + "\n" + call(n - n // 2),
        1,
    ),
}


def make_client(tmp: str) -> Client:
    """A client with only the textcalls reader, isolated from this machine's settings."""
    return Client(
        plugins=[modelplug_textcalls],
        entry_points=False,
        user_config=Path(tmp) / "config.toml",
        project_dir=tmp,
        environ={},
    )


def run(client: Client, mode: str, reply: str, calls: int) -> float:
    held = client.held_text(TOOLS, mode)
    feed = held.feed
    gc.collect()
    gc.disable()  # as timeit does: a collection landing in one run is noise
    try:
        # CPU time of this process: other work on the machine does not inflate it.
        start = time.process_time()
        for ch in reply:
            feed(ch)
        _rest, _prose, found = held.finish()
        elapsed = time.process_time() - start
    finally:
        gc.enable()
    if len(found) != calls:
        raise SystemExit(f"{mode}: expected {calls} calls, read {len(found)}")
    return elapsed


def feed_case(name: str, size: int, feed: bool) -> None:
    """One case in this process, for callgrind: build the client and the reply, then
    (with ``feed``) stream the reply through HeldText."""
    mode, build, calls = CASES[name]
    with tempfile.TemporaryDirectory() as tmp:
        client = make_client(tmp)
        reply = build(size)
        held = client.held_text(TOOLS, mode)
        if feed:
            for ch in reply:
                held.feed(ch)
            if len(held.finish()[2]) != calls:
                raise SystemExit(f"{name}: expected {calls} calls")


def instructions(name: str, size: int, feed: bool) -> int:
    what = "feed" if feed else "setup"
    return count_instructions(
        [sys.executable, os.path.abspath(__file__), "--case", name, str(size), what],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def main_instructions() -> int:
    if not have_valgrind():
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    small = 20_000
    worst = 0.0
    print(f"{'case':34} {small // 1000:>5} KB {2 * small // 1000:>5} KB  ratio  (instructions)")
    for name in CASES:
        # Less what building the client and the reply costs: only the feeding counts.
        n1 = instructions(name, small, True) - instructions(name, small, False)
        n2 = instructions(name, 2 * small, True) - instructions(name, 2 * small, False)
        ratio = n2 / n1
        worst = max(worst, ratio)
        print(f"{name:34} {n1 / 1e6:6.0f} M {n2 / 1e6:6.0f} M  {ratio:5.2f}")
    verdict = "ok" if worst <= TARGET else "TOO SLOW (quadratic?)"
    print(f"worst ratio {worst:.2f} (target <= {TARGET}): {verdict}")
    return 0 if worst <= TARGET else 1


def main() -> int:
    if "--case" in sys.argv:
        at = sys.argv.index("--case")
        name, size, what = sys.argv[at + 1 : at + 4]
        feed_case(name, int(size), what == "feed")
        return 0
    if "--instructions" in sys.argv:
        return main_instructions()
    quick = "--quick" in sys.argv
    small = 20_000 if quick else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        client = make_client(tmp)
        worst = 0.0
        print(f"{'case':34} {small // 1000:>5} KB {2 * small // 1000:>5} KB  ratio")
        for name, (mode, build, calls) in CASES.items():
            # Best of five, the sizes taking turns: the least disturbed run is the one
            # closest to the cost, and drift in the machine's load hits both sizes.
            replies = (build(small), build(2 * small))
            t1 = t2 = float("inf")
            for _ in range(5):
                t1 = min(t1, run(client, mode, replies[0], calls))
                t2 = min(t2, run(client, mode, replies[1], calls))
            ratio = t2 / t1
            worst = max(worst, ratio)
            print(f"{name:34} {t1:7.2f}s {t2:7.2f}s  {ratio:5.2f}")
        client.close()
    verdict = "ok" if worst <= TARGET else "TOO SLOW (quadratic?)"
    print(f"worst ratio {worst:.2f} (target <= {TARGET}): {verdict}")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
