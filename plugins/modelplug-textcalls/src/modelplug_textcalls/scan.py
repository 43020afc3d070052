"""What one step of reading answers, and the two scans every reader shares.

A step answers None (more text is needed), a :class:`Finished` (``end`` is the index
just past what was read) or a :class:`Rejected` (the text is not what was looked for;
reading resumes at ``pos``). :func:`skip_blanks` passes over blanks;
:func:`match_literal` tells whether the text at an index is a known literal, or may
still become one while the reply streams.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

__all__ = [
    "LINE_BLANKS",
    "WHITESPACE",
    "Call",
    "Finished",
    "Rejected",
    "Step",
    "match_literal",
    "skip_blanks",
]

LINE_BLANKS = " \t\r"
WHITESPACE = " \t\r\n"  # JSON's, and blank lines

# A call's name and arguments. Here, with what a step answers, rather than in calls.py
# (which says what counts as one): calls.py imports this module, and not the reverse.
Call: TypeAlias = tuple[str, dict[str, Any]]


@dataclass
class Finished:
    end: int
    calls: list[Call] = field(default_factory=list)


@dataclass
class Rejected:
    pos: int
    problem: str | None = None


Step = Finished | Rejected | None


def skip_blanks(text: str, at: int, blanks: str) -> int:
    """The index of the first character at or after ``at`` that is not one of ``blanks``."""
    end = len(text)
    while at < end and text[at] in blanks:
        at += 1
    return at


def match_literal(text: str, at: int, literals: tuple[str, ...], final: bool) -> Step:
    """Whether the text at ``at`` is one of ``literals``.

    Finished: it is, and ``end`` is just past it. None: the text ends where it could
    still become one; with ``final`` it cannot, and the answer is Rejected at the end.
    Rejected: it is none of them, and ``pos`` is where the longest agreement ends.
    """
    end = len(text)
    ruled_out_at = at
    may_become = False
    for literal in literals:
        if text.startswith(literal, at):
            return Finished(at + len(literal))
        differs_at = _first_difference(text, at, literal)
        if differs_at == end:
            may_become = True
        ruled_out_at = max(ruled_out_at, differs_at)
    if may_become:
        return Rejected(end) if final else None
    return Rejected(ruled_out_at)


def _first_difference(text: str, at: int, literal: str) -> int:
    # At most the literal's length is copied: cheap on every delta of a stream.
    have = text[at : at + len(literal)]
    for offset, (got, want) in enumerate(zip(have, literal, strict=False)):
        if got != want:
            return at + offset
    return min(len(text), at + len(literal))
