"""The repetition guard's contract: its settings, the detector a plugin may supply, and
the trimming of a channel's text by what a detector found.

A model stuck in a loop writes the same bytes again and again until its token cap, at
full price and without a word. Core watches every stream's content and reasoning for
that (see :mod:`modelplug.builtin.loop_detector` for the default detector) and, when it
trips, closes the provider's stream at once and ends the Response with stop reason
``repetition``, a :class:`~modelplug.contract.types.Repetition` record, and the
redundant copies trimmed from the kept text so the next turn is not taught the loop.

The thresholds separate a loop from the repetition real answers are full of (table
rules, blank lines, near-identical rows): the same bytes, exactly, for a long span with
nothing else between. A block of at least ``min_period`` bytes, at least ``min_copies``
copies of it back to back, covering at least ``min_span`` bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias

if TYPE_CHECKING:
    from modelplug.contract.types import Repetition

__all__ = ["Channel", "RepetitionDetector", "RepetitionGuard", "trim_repetition"]

#: The stream channels a detector is fed: the answer's text and the readable reasoning.
Channel: TypeAlias = Literal["content", "reasoning"]

SECTION = "repetition"


@dataclass(frozen=True)
class RepetitionGuard:
    """The guard's thresholds: the ``[repetition]`` settings table, or one call's
    ``repetition=RepetitionGuard(...)``. The defaults are the guard's; ``off`` disables it.

    :param off: True disables the guard (no detector runs, not even a plugin's).
    :param min_period: the shortest repeating block, in bytes, counted as a loop; below
        it ordinary formatting repeats freely.
    :param max_period: the longest block looked for; a scan costs time linear in it.
    :param min_copies: how many copies of the block, back to back, make a loop.
    :param min_span: the fewest bytes those copies must cover together (three copies of
        a short header are not a loop).
    :param scan_every: how many new characters (bytes, for ASCII) of a channel are
        gathered before it is scanned again: never per delta, which would cost more and
        find nothing sooner.
    :param tool_copies: the tool kind: a call (same name, same arguments) made again
        after it returned the same result this many times in the conversation ends the
        turn with stop reason ``repetition``, the calls not delivered (0: never).
    """

    off: bool = False
    min_period: int = field(default=24, metadata={"gt": 0})
    max_period: int = field(default=1024, metadata={"gt": 0})
    min_copies: int = field(default=3, metadata={"gt": 1})
    min_span: int = field(default=512, metadata={"gt": 0})
    scan_every: int = field(default=256, metadata={"gt": 0})
    tool_copies: int = field(default=3, metadata={"gt": -1})

    def __post_init__(self) -> None:
        if self.max_period < self.min_period:
            raise ValueError(
                f"repetition max_period ({self.max_period}) is below min_period "
                f"({self.min_period}); make max_period at least min_period"
            )


class RepetitionDetector(Protocol):
    """What watches one stream for a loop: core's default, or a plugin's own from
    :func:`~modelplug.contract.hookspecs.modelplug_repetition_detector`.

    One detector serves one stream. Core gathers each channel's new text and calls
    :meth:`scan` once ``scan_every`` characters have arrived on it since its last scan.
    """

    @property
    def scan_every(self) -> int:
        """How many new characters of a channel core gathers before calling
        :meth:`scan` (1: every delta)."""
        ...

    def scan(self, channel: Channel, text: str) -> Repetition | None:
        """Look at ``text``, the channel's text that arrived since its last scan (the
        detector keeps what it needs of the earlier text itself).

        :return: None to let the stream go on; a Repetition to close it now. Its
            ``offset``, ``period`` and ``trimmed`` count UTF-8 bytes of the channel's
            whole text; ``trimmed`` bytes are cut from its end in the kept Response
            (0 keeps it all).
        """
        ...


def trim_repetition(text: str, trimmed: int) -> str:
    """``text`` without its last ``trimmed`` UTF-8 bytes, never cutting a character in
    two (a cut inside one keeps that whole character)."""
    if trimmed <= 0:
        return text
    data = text.encode()
    cut = max(0, len(data) - trimmed)
    # A UTF-8 continuation byte (10xxxxxx) is inside a character: keep it whole.
    while cut < len(data) and data[cut] & 0xC0 == 0x80:
        cut += 1
    return data[:cut].decode()
