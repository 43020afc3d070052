"""Core's default repetition detector: the same bytes repeated exactly, for a long span.

A scan asks one question of a channel's bytes: is there a period ``p`` in
``min_period..max_period`` such that the text's last ``L = p * max(min_copies,
ceil(min_span / p))`` bytes repeat with period ``p``? If the text keeps looping, its
end stays inside the periodic run whatever the copies' alignment, so a loop is found at
the first scan after it has covered ``L`` bytes.

Finding the candidates costs no Python loop per byte: a periodic tail of period ``p``
holds its last ``min_period`` bytes again ``p`` bytes earlier, so the candidates are
the occurrences of that suffix in the last ``max_period + min_period`` bytes, found by
``bytes.rfind`` from the right (smallest ``p`` first). Each is checked by one slice
comparison of at most ``L`` bytes. A scan therefore costs time linear in the window
(``max_period * min_copies`` bytes at most), in C, and runs once per ``scan_every`` new
characters, never per delta. A run is reported when ``min_scans`` scans in a row have
found it (see :class:`LoopDetector`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from modelplug.contract.repetition import Channel, RepetitionGuard
    from modelplug.contract.types import Repetition

__all__ = ["LoopDetector", "find_loop"]

# The sample a Repetition carries: enough to recognise the loop in a log line.
SAMPLE_CHARS = 200


class LoopDetector:
    """The default detector for one stream: one byte buffer per channel, so a loop in
    the reasoning is not broken up by the answer's text, nor the other way round.

    A run found at the channel's end is reported once ``guard.min_scans`` scans in a
    row have found it (same start, same period): a loop does not end, so it is still
    there, longer, a scan later; exact repetition that a real answer holds (a quoted
    log's identical stack frames) has ended by then and is let through.
    """

    def __init__(self, guard: RepetitionGuard) -> None:
        self.guard = guard
        self.scan_every = guard.scan_every
        self.seen: dict[str, bytearray] = {}
        # Per channel: the run the last scans found at the end, and how many found it.
        self.runs: dict[str, tuple[int, int, int]] = {}

    def scan(self, channel: Channel, text: str) -> Repetition | None:
        """Add ``text`` to the channel's bytes and look for a loop at their end."""
        data = self.seen.get(channel)
        if data is None:
            data = self.seen[channel] = bytearray()
        data += text.encode()
        found = find_loop(data, self.guard, channel)
        if found is None:
            self.runs.pop(channel, None)
            return None
        offset, period, scans = self.runs.get(channel, (-1, 0, 0))
        scans = scans + 1 if (offset, period) == (found.offset, found.period) else 1
        if scans >= self.guard.min_scans:
            return found
        self.runs[channel] = (found.offset, found.period, scans)
        return None


def find_loop(data: bytes | bytearray, guard: RepetitionGuard, channel: str) -> Repetition | None:
    """The loop at the end of ``data`` with the smallest period meeting ``guard``'s
    thresholds, or None."""
    shortest = guard.min_period
    end = len(data)
    if end < max(guard.min_span, shortest * guard.min_copies):
        return None
    needle = bytes(data[end - shortest :])
    # An occurrence of the needle at ``at`` means a candidate period end - shortest - at.
    lowest = max(0, end - shortest - guard.max_period)
    # rfind's end bound: the needle must lie whole before end - min_period.
    bound = end - shortest
    while True:
        at = data.rfind(needle, lowest, bound)
        if at < 0:
            return None
        period = end - shortest - at
        span = period * max(guard.min_copies, -(-guard.min_span // period))
        if span <= end and data[end - span + period : end] == data[end - span : end - period]:
            return _record(data, period, end - span, channel)
        bound = at + shortest - 1


def _record(data: bytes | bytearray, period: int, start: int, channel: str) -> Repetition:
    """The Repetition for a periodic run of ``period`` bytes ending at the end of
    ``data`` and known to begin at ``start`` or before: where it really begins, how
    many copies it holds, and how many bytes to trim so that exactly one copy stays."""
    from modelplug.contract.types import Repetition

    end = len(data)
    copy = data[end - period :]
    # Back by whole copies (in C), then by the bytes of a partial one.
    while start >= period and data[start - period : start] == copy:
        start -= period
    while start > 0 and data[start - 1] == data[start - 1 + period]:
        start -= 1
    copies = (end - start) // period
    # Keep exactly one copy, the first: what follows it is copies and a part of one.
    # Cut where a character begins (it moves only when the run begins mid-character).
    cut = start + period
    while cut < end and data[cut] & 0xC0 == 0x80:
        cut += 1
    first = bytes(data[start : start + period]).decode(errors="replace")
    return Repetition(
        channel=channel,
        period=period,
        copies=copies,
        offset=start,
        trimmed=end - cut,
        sample=first[:SAMPLE_CHARS],
    )
