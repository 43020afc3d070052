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

from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias

# Defined beside Request, which holds one per call; re-exported here, its home.
from modelplug.contract.types import RepetitionGuard

if TYPE_CHECKING:
    from modelplug.contract.types import Repetition

__all__ = ["Channel", "RepetitionDetector", "RepetitionGuard", "trim_repetition"]

#: The stream channels a detector is fed: the answer's text and the readable reasoning.
Channel: TypeAlias = Literal["content", "reasoning"]

SECTION = "repetition"


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
