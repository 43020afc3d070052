"""The default repetition detector (modelplug.builtin.loop_detector), as properties: text
with no exact repetition meeting the thresholds never trips it; a loop always trips it
within ``min_scans`` scans after it meets them; repetition that ends before the next
scan (a real log's identical frames) never trips it; the record's trim keeps one copy
and never loses text that was not repeated."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from modelplug.builtin.loop_detector import LoopDetector, find_loop
from modelplug.contract.repetition import RepetitionGuard, trim_repetition

GUARD = RepetitionGuard()


def has_loop(data: bytes, guard: RepetitionGuard = GUARD) -> bool:
    """The definition, by brute force: some p in range whose run ends at the end of
    ``data``, holding at least min_copies copies that cover at least min_span bytes."""
    for period in range(guard.min_period, guard.max_period + 1):
        span = period * max(guard.min_copies, -(-guard.min_span // period))
        if span <= len(data) and data[-span + period :] == data[-span:-period]:
            return True
    return False


def feed(detector: LoopDetector, text: str, size: int) -> tuple[int, object]:
    """Feed ``text`` in deltas of ``size`` characters, scanning every scan_every as core
    does; the characters fed when it tripped (or all of them) and the record."""
    pending = 0
    fed = 0
    start = 0
    for at in range(0, len(text), size):
        delta = text[at : at + size]
        fed += len(delta)
        pending += len(delta)
        if pending >= detector.scan_every:
            found = detector.scan("content", text[start:fed])
            start, pending = fed, 0
            if found is not None:
                return fed, found
    return fed, None


words = st.text(alphabet="abcdefghij klmnop\n|-", min_size=0, max_size=3000)


@given(words)
def test_random_text_trips_only_where_an_exact_loop_meets_the_thresholds(text: str) -> None:
    data = text.encode()
    found = find_loop(data, GUARD, "content")
    assert (found is not None) == has_loop(data)


@given(st.binary(min_size=0, max_size=2500), st.integers(0, 255))
def test_random_bytes_agree_with_the_definition(data: bytes, salt: int) -> None:
    found = find_loop(data, GUARD, "content")
    assert (found is not None) == has_loop(data)


@given(
    prefix=st.text(min_size=0, max_size=600),
    block=st.text(min_size=24, max_size=300).filter(lambda b: len(b.encode()) <= 1024),
    size=st.integers(1, 40),
)
def test_a_loop_trips_within_min_scans_scans_of_meeting_the_thresholds(
    prefix: str, block: str, size: int
) -> None:
    period = len(block.encode())
    needed = period * max(GUARD.min_copies, -(-GUARD.min_span // period))
    copies = -(-needed // period) + 40
    text = prefix + block * copies
    detector = LoopDetector(GUARD)
    fed, found = feed(detector, text, size)
    assert found is not None
    # Tripped no later than min_scans scan intervals (each up to a delta longer) after
    # the loop's bytes alone met the thresholds (a scan counts characters, up to 4
    # bytes each).
    looped = text[len(prefix) :].encode()[:needed].decode(errors="ignore")
    threshold_chars = len(prefix) + len(looped)
    assert fed <= threshold_chars + GUARD.min_scans * (GUARD.scan_every + size)
    # What it reports is a real run: from its offset to the end, period by period.
    seen = text[:fed].encode()
    run = seen[found.offset :]
    assert run[found.period :] == run[: -found.period]
    assert found.copies == len(run) // found.period >= GUARD.min_copies


@given(
    prefix=st.text(min_size=0, max_size=400),
    block=st.text(min_size=24, max_size=200),
    copies=st.integers(3, 30),
    partial=st.integers(0, 199),
)
def test_trimming_keeps_one_copy_and_all_that_was_not_repeated(
    prefix: str, block: str, copies: int, partial: int
) -> None:
    text = prefix + block * copies + block[: partial % len(block)]
    data = text.encode()
    found = find_loop(data, GUARD, "content")
    if found is None:
        assert not has_loop(data)
        return
    kept = trim_repetition(text, found.trimmed)
    kept_bytes = kept.encode()
    # Nothing before the loop is lost; one copy of the block stays, and less than two.
    assert kept_bytes[: found.offset] == data[: found.offset]
    # Exactly one copy (a character cut in two at the end is kept whole).
    assert found.period <= len(kept_bytes) - found.offset < found.period + 4
    assert text.startswith(kept)
    assert found.copies >= GUARD.min_copies
    assert found.copies * found.period >= GUARD.min_span


def test_a_measured_loop_shape_is_found_with_its_period_copies_and_offset() -> None:
    intro = "Here is the plan:\n"
    line = "- check the configuration file for the missing key and retry\n"  # 62 bytes
    text = intro + line * 20
    found = find_loop(text.encode(), GUARD, "content")
    assert found is not None
    assert (found.period, found.copies, found.offset) == (len(line), 20, len(intro) - 1)
    assert found.sample.startswith("\n- check")
    assert trim_repetition(text, found.trimmed) == intro + line[:-1]


def test_text_shorter_than_the_span_never_trips() -> None:
    block = "x" * 100
    assert find_loop((block * 6).encode(), GUARD, "content") is not None
    assert find_loop((block * 6)[:511].encode(), GUARD, "content") is None


def test_thresholds_are_the_guards() -> None:
    text = ("ab" * 20 + "\n") * 12  # period 41, 492 bytes: below min_span 512
    assert find_loop(text.encode(), GUARD, "content") is None
    looser = RepetitionGuard(min_span=300)
    assert find_loop(text.encode(), looser, "content") is not None


def test_channels_are_watched_apart() -> None:
    detector = LoopDetector(GUARD)
    block = "the same sentence, again and again and again. "
    noise = random.Random(7)
    found = None
    for _ in range(40):
        thought = "".join(noise.choice("xyz ") for _ in range(47))
        assert detector.scan("reasoning", thought) is None
        found = detector.scan("content", block)
        if found is not None:
            break
    assert found is not None and found.channel == "content"
    assert found.period == len(block)


VALGRIND = Path(__file__).parent / "recordings" / "valgrind_report.md"


def valgrind_report() -> str:
    """The recorded report, without its source line."""
    return VALGRIND.read_text().split("\n", 1)[1]


def test_a_real_logs_identical_frames_meet_the_thresholds_but_never_trip_the_guard() -> None:
    text = valgrind_report()
    # By the thresholds alone it is a loop: six copies of a 90-byte frame, 540 bytes.
    data = text.encode()
    frames = {
        (found.period, found.copies)
        for end in range(len(data))
        if (found := find_loop(data[:end], GUARD, "content")) is not None
    }
    assert frames == {(90, 6)}
    # It ends before a second scan can see it grow: at every alignment of the scans
    # (each phase of the 256-character interval) and with deltas of every size.
    for phase in range(GUARD.scan_every):
        detector = LoopDetector(GUARD)
        assert detector.scan("content", text[:phase]) is None
        at = phase
        while at < len(text):
            assert detector.scan("content", text[at : at + GUARD.scan_every]) is None
            at += GUARD.scan_every
    for size in range(1, 40):
        assert feed(LoopDetector(GUARD), text, size) == (len(text), None)


def test_one_scan_cuts_at_the_first_sight_of_a_run() -> None:
    # min_scans = 1 is the guard without the second look: the same report trips it
    # where a scan falls inside the frames.
    text = valgrind_report()
    eager = RepetitionGuard(min_scans=1)
    tripped = 0
    for phase in range(eager.scan_every):
        detector = LoopDetector(eager)
        detector.scan("content", text[:phase])
        at = phase
        while at < len(text):
            found = detector.scan("content", text[at : at + eager.scan_every])
            at += eager.scan_every
            if found is not None:
                assert (found.period, found.copies) == (90, 6)
                tripped += 1
                break
    assert 0 < tripped < eager.scan_every


def test_a_loop_after_the_same_report_is_cut_one_scan_after_it_is_first_seen() -> None:
    text = valgrind_report()
    block = "==28993==    by 0x12F68A3: ??? (in /home/user1/valgrind/node-v12.14.1-linux-x64/bin/node)\n"
    detector = LoopDetector(GUARD)
    sightings = []
    looping = text + block * 60
    for at in range(0, len(looping), GUARD.scan_every):
        found = detector.scan("content", looping[at : at + GUARD.scan_every])
        sightings.append(find_loop(looping[: at + GUARD.scan_every].encode(), GUARD, "c"))
        if found is not None:
            break
    assert found is not None and found.period == len(block)
    # The scan before the cut saw the same run (the first look); the one before that not.
    assert sightings[-2] is not None and sightings[-2].offset == found.offset
    assert sightings[-3] is None or sightings[-3].offset != found.offset


def test_a_run_interrupted_between_scans_starts_its_count_again() -> None:
    block = "the same sentence, again and again and again. "  # 47 bytes
    detector = LoopDetector(GUARD)
    assert detector.scan("content", block * 12) is None  # 564 bytes: first sight
    # Something else, then the same loop again: a new run, seen for the first time.
    assert detector.scan("content", "a different line entirely.\n" + block * 12) is None
    found = detector.scan("content", block * 6)
    assert found is not None and found.period == len(block)
