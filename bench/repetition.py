"""The repetition guard's false positives on real text, its detection time on a loop,
and its cost per byte: core's default detector (modelplug.builtin.loop_detector) fed as
a call's run feeds it, in deltas of 1 to 16 characters, a scan every 256 characters.

    python bench/repetition.py [--answers FILE.json ...] [--extra DIR ...] [--max-mb 40]
                               [--min-scans N]

Real texts, read from this machine (whatever of them exists):

- markdown (tables, lists): the repository's docs and READMEs, every ``*.md`` in the
  venv's site-packages and under /usr/share/doc, and under each ``--extra`` directory;
- code: every ``*.py`` in the venv's site-packages (and under ``--extra``);
- logs: /var/log's text logs and the Debian changelogs of /usr/share/doc (gzip);
- model answers: ``--answers`` files, JSON with a ``convos`` list of conversations
  (the gpt-oss evals' ``*_allresults.json``): every assistant message.

None may trip: each trip is printed with its file, period, copies and sample. Where
the scans fall decides whether a short run of copies is seen, so every run of exact
copies over the thresholds is also listed, with whether some alignment of the scans
would cut it. Then a loop is appended to real texts (a block cut from the text itself,
of 24 to 1,000 bytes, repeated 40 times and over 4 KB) and the bytes from the loop's
start to the trip are printed beside the least the thresholds need (the guard cuts
``min_scans`` scans after that: the first that sees the run and the next that finds it
grown). Printed: texts, bytes and trips per kind; the detection delays; CPU
microseconds per kilobyte of text (scans included).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import statistics
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "core"))

from modelplug.builtin.loop_detector import LoopDetector  # noqa: E402
from modelplug.contract.repetition import RepetitionGuard  # noqa: E402

GUARD = RepetitionGuard()
PERIODS = (24, 40, 64, 85, 128, 200, 333, 500, 777, 1000)


# CPU seconds spent inside the detector's scans (joining the deltas included).
SCANNING = [0.0]


def feed(text: str, rng: random.Random) -> tuple[int, object]:
    """``text`` through a fresh detector as core feeds it; (characters fed when it
    tripped or all of them, the Repetition or None)."""
    detector = LoopDetector(GUARD)
    pending: list[str] = []
    unscanned = fed = 0
    at = 0
    while at < len(text):
        size = rng.randint(1, 16)
        delta = text[at : at + size]
        at += size
        pending.append(delta)
        fed += len(delta)
        unscanned += len(delta)
        if unscanned >= GUARD.scan_every:
            unscanned = 0
            started = time.process_time()
            found = detector.scan("content", "".join(pending))
            SCANNING[0] += time.process_time() - started
            pending.clear()
            if found is not None:
                return fed, found
    return fed, None


def files(roots: list[Path], pattern: str) -> Iterator[Path]:
    for root in roots:
        if root.is_dir():
            yield from sorted(p for p in root.rglob(pattern) if p.is_file())


def read(path: Path) -> str | None:
    try:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        return data.decode()
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
        return None


def corpus(args: argparse.Namespace) -> dict[str, list[tuple[str, str]]]:
    site = Path(sysconfig.get_paths()["purelib"])
    extra = [Path(d) for d in args.extra]
    docs = [ROOT / "docs", ROOT / "plugins", site, Path("/usr/share/doc"), *extra]
    kinds: dict[str, list[tuple[str, str]]] = {
        "markdown": [],
        "code": [],
        "logs": [],
        "answers": [],
    }
    budget = args.max_mb * 1_000_000
    sources = {
        "markdown": files([*docs, ROOT / "README.md"], "*.md"),
        "code": files([site, *extra], "*.py"),
        "logs": iter(
            [
                *sorted(Path("/var/log").glob("*.log")),
                *files([Path("/usr/share/doc")], "changelog*.gz"),
                *files(extra, "*.log"),
            ]
        ),
    }
    for kind, paths in sources.items():
        size = 0
        for path in paths:
            text = read(path)
            if text and size < budget:
                kinds[kind].append((str(path), text))
                size += len(text)
    for name in args.answers:
        data = json.loads(Path(name).read_text())
        for number, convo in enumerate(data.get("convos", [])):
            for message in convo:
                if message.get("role") == "assistant" and message.get("content"):
                    kinds["answers"].append((f"{name}#{number}", message["content"]))
    return kinds


def false_positives(kinds: dict[str, list[tuple[str, str]]]) -> tuple[int, float]:
    rng = random.Random(20261207)
    trips = 0
    total_bytes = 0
    print("false positives (none may trip):")
    for kind, texts in kinds.items():
        count = size = tripped = 0
        for name, text in texts:
            _, found = feed(text, rng)
            count += 1
            size += len(text.encode())
            if found is not None:
                tripped += 1
                print(f"    TRIP {name}: {found!r}")
        print(f"  {kind:<9} {count:6,} texts  {size / 1e6:8.2f} MB  {tripped} trips")
        trips += tripped
        total_bytes += size
    per_kb = SCANNING[0] / (total_bytes / 1000) * 1e6 if total_bytes else 0.0
    print(f"  all       {total_bytes / 1e6:8.2f} MB scanned, {trips} trips")
    print(f"  cost: {per_kb:.2f} us of CPU per KB of text in the detector's scans")
    return trips, per_kb


def exact_runs(data: bytes) -> dict[tuple[int, int], int]:
    """Every run of exact copies in ``data`` that meets the guard's thresholds, found by a
    look every 16 bytes: (start, period) -> its whole length in bytes."""
    from modelplug.builtin.loop_detector import find_loop

    runs: dict[tuple[int, int], int] = {}
    for end in range(GUARD.min_span, len(data) + 1, 16):
        window = data[max(0, end - 4 * GUARD.max_period) : end]
        found = find_loop(window, GUARD, "content")
        if found is None:
            continue
        start = end - len(window) + found.offset
        while start > 0 and data[start - 1] == data[start - 1 + found.period]:
            start -= 1  # a run begun before the window
        if (start, found.period) in runs:
            continue
        stop = end
        while stop < len(data) and data[stop] == data[stop - found.period]:
            stop += 1
        runs[start, found.period] = stop - start
    return runs


def worst_alignment(kinds: dict[str, list[tuple[str, str]]]) -> int:
    """The texts some alignment of the scans would cut: a run of copies is cut when
    ``min_scans`` scans, each ``scan_every`` characters after the last, fall inside it
    once it meets the thresholds, so a run longer than the bytes the thresholds need
    plus ``(min_scans - 1) * scan_every`` is cut wherever the scans fall."""
    print(f"false positives wherever the scans fall (min_scans = {GUARD.min_scans}):")
    cut = 0
    for kind, texts in kinds.items():
        runs = cuttable = 0
        for name, text in texts:
            for (start, period), length in exact_runs(text.encode()).items():
                runs += 1
                needed = period * max(GUARD.min_copies, -(-GUARD.min_span // period))
                if length >= needed + (GUARD.min_scans - 1) * GUARD.scan_every:
                    cuttable += 1
                    print(f"    CUT {name}: {period} B x {length // period} at byte {start}")
        print(f"  {kind:<9} {runs:6,} runs over the thresholds, {cuttable} a scan could cut")
        cut += cuttable
    return cut


def detection(kinds: dict[str, list[tuple[str, str]]]) -> None:
    """Loops appended to real texts: bytes from the loop's start to the trip."""
    rng = random.Random(7)
    hosts = [text for texts in kinds.values() for _, text in texts if len(text) > 2500]
    rng.shuffle(hosts)
    print("detection: a block of the text itself repeated after it (40 copies, >= 4 KB)")
    print("  period  least needed  bytes to trip (median, max over texts)  texts")
    for period in PERIODS:
        delays: list[int] = []
        missed = 0
        for text in hosts[:60]:
            data = text.encode()
            cut = rng.randrange(0, len(data) - period - 1)
            block = data[cut : cut + period].decode(errors="ignore")
            if len(block.encode()) != period:
                continue
            prefix = text[: len(text) // 2]
            # A loop runs to the token cap: at least 40 copies and 4 KB, so that the
            # scan after the one that first sees it still finds it growing.
            looping = block * max(40, -(-4096 // period))
            fed, found = feed(prefix + looping, rng)
            if found is None:
                missed += 1
                continue
            delays.append(len((prefix + looping)[:fed].encode()) - len(prefix.encode()))
        least = period * max(GUARD.min_copies, -(-GUARD.min_span // period))
        if delays:
            print(
                f"  {period:6}  {least:12,}  {statistics.median(delays):13,.0f}  "
                f"{max(delays):8,}  {len(delays):5}{f'  ({missed} missed)' if missed else ''}"
            )


def main() -> int:
    global GUARD
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", nargs="*", default=[], help="JSON files with convos")
    parser.add_argument("--extra", nargs="*", default=[], help="more directories to read")
    parser.add_argument("--max-mb", type=float, default=40, help="megabytes per kind")
    parser.add_argument(
        "--min-scans", type=int, default=GUARD.min_scans, help="the guard's min_scans"
    )
    args = parser.parse_args()
    GUARD = RepetitionGuard(min_scans=args.min_scans)
    print(f"guard: {GUARD}")
    kinds = corpus(args)
    trips, _ = false_positives(kinds)
    trips += worst_alignment(kinds)
    detection(kinds)
    return 1 if trips else 0


if __name__ == "__main__":
    raise SystemExit(main())
