"""The mode readers: where in a reply a call may start, and what happens when one fails.

A reader is fed the same growing reply again and again (``advance``) and remembers how
far it has read, so a whole stream costs O(its length). ``hold_from`` says where the
text that may still be a call starts; ``result`` gives the prose and the calls once the
reply is complete. The same code reads a stream and a finished reply, so what was shown
while streaming is always a prefix of the final prose.
"""

from __future__ import annotations

from collections.abc import Callable

from modelplug import ParsedText, ToolUseBlock, new_tool_use_id

from .calls import Call
from .heredoc import HeredocUnit
from .scan import LINE_BLANKS, WHITESPACE, Rejected, skip_blanks
from .units import FenceUnit, JsonUnit, TagUnit, Unit

__all__ = ["LineReader", "Reader", "WholeReader", "make_reader"]

UnitFactory = Callable[[str, int], Unit | None]


def _blocks(calls: list[Call]) -> list[ToolUseBlock]:
    return [ToolUseBlock(id=new_tool_use_id(), name=name, input=args) for name, args in calls]


def json_units(names: frozenset[str], walk_foreign: bool) -> UnitFactory:
    """Units for the JSON forms: ``{``/``[`` values, ``` fences, ``<tool_call>`` tags."""

    def make(c: str, at: int) -> Unit | None:
        if c == "{" or c == "[":
            return JsonUnit(at, names)
        if c == "`":
            return FenceUnit(at, names, walk_foreign)
        if c == "<":
            return TagUnit(at, names)
        return None

    return make


def heredoc_units(names: frozenset[str]) -> UnitFactory:
    def make(c: str, at: int) -> Unit | None:
        return HeredocUnit(at, names) if c == "@" else None

    return make


class Reader:
    """What every mode reader offers."""

    def advance(self, text: str, final: bool) -> None:
        raise NotImplementedError

    def hold_from(self) -> int | None:
        raise NotImplementedError

    def result(self, text: str) -> ParsedText:
        raise NotImplementedError


class WholeReader(Reader):
    """whole: the reply is one or more calls and nothing else, or it is all text.

    Units may follow each other with any whitespace between them. The reply is held
    from its first character until something rules a call out; from then on (and in
    the final result) all of it is text.
    """

    def __init__(self, names: frozenset[str]) -> None:
        self._units = json_units(names, walk_foreign=False)
        self._pos = 0
        self._unit: Unit | None = None
        self._calls: list[Call] = []
        self._failed = False
        self._problems: list[str] = []

    def _fail(self, problem: str | None) -> None:
        self._failed = True
        self._unit = None
        if problem:
            self._problems.append(problem)

    def advance(self, text: str, final: bool) -> None:
        end = len(text)
        while not self._failed:
            if self._unit is None:
                i = self._pos = skip_blanks(text, self._pos, WHITESPACE)
                if i == end:
                    return
                self._unit = self._units(text[i], i)
                if self._unit is None:
                    later = (
                        f"in whole mode the reply must be only calls; text follows them "
                        f"at character {i}"
                    )
                    self._fail(later if self._calls else None)
                    return
            step = self._unit.feed(text, final)
            if step is None:
                return
            if isinstance(step, Rejected):
                self._fail(step.problem)
                return
            self._calls.extend(step.calls)
            self._pos = step.end
            self._unit = None

    def hold_from(self) -> int | None:
        return None if self._failed else 0

    def result(self, text: str) -> ParsedText:
        if self._failed or not self._calls:
            return ParsedText(text=text, problems=self._problems)
        return ParsedText(text="", calls=_blocks(self._calls))


class LineReader(Reader):
    """lines and heredoc: calls stand on their own lines between lines of prose.

    A unit may only start a line (after blanks) and must end one; a call in the middle
    of a sentence is text. Each line of prose is shown as it arrives; the text is held
    from the first line that can still start a call. With ``all_or_nothing`` (heredoc)
    one failed call makes every call of the reply text, and reading stops there.
    """

    def __init__(self, units: UnitFactory, all_or_nothing: bool = False) -> None:
        self._units = units
        self._all_or_nothing = all_or_nothing
        self._phase = "line"
        self._pos = 0
        self._line_at = 0
        self._unit: Unit | None = None
        self._found: list[Call] = []
        self._spans: list[tuple[int, int]] = []
        self._calls: list[Call] = []
        self._problems: list[str] = []
        self._failed = False

    def advance(self, text: str, final: bool) -> None:
        end = len(text)
        while not self._failed:
            phase = self._phase
            if phase == "line":
                i = self._pos = skip_blanks(text, self._pos, LINE_BLANKS)
                if i == end:
                    return
                if text[i] == "\n":
                    self._pos = self._line_at = i + 1
                    continue
                self._unit = self._units(text[i], i)
                self._phase = "prose" if self._unit is None else "unit"
            elif phase == "prose":
                newline = text.find("\n", self._pos)
                if newline < 0:
                    self._pos = end
                    return
                self._pos = self._line_at = newline + 1
                self._phase = "line"
            elif phase == "unit":
                assert self._unit is not None
                step = self._unit.feed(text, final)
                if step is None:
                    return
                self._unit = None
                if isinstance(step, Rejected):
                    self._reject(step.problem)
                    self._pos = step.pos
                    self._phase = "prose"
                else:
                    self._found = step.calls
                    self._pos = step.end
                    self._phase = "after"
            else:  # "after": the rest of the unit's last line must be blank
                i = self._pos = skip_blanks(text, self._pos, LINE_BLANKS)
                if i == end and not final:
                    return
                if i == end or text[i] == "\n":
                    stop = min(i + 1, end)
                    self._spans.append((self._line_at, stop))
                    self._calls.extend(self._found)
                    self._pos = self._line_at = stop
                    self._phase = "line"
                    if i == end:
                        return
                else:
                    self._reject(
                        f"the call at character {self._line_at} does not stand on its own "
                        f"line: text follows it at character {i}"
                    )
                    self._phase = "prose"

    def _reject(self, problem: str | None) -> None:
        if problem is None:
            return
        self._problems.append(problem)
        if self._all_or_nothing:
            self._failed = True

    def hold_from(self) -> int | None:
        if self._failed:
            return None
        if self._spans:
            return self._spans[0][0]
        if self._phase == "after" or (
            self._phase == "unit" and self._unit is not None and self._unit.held
        ):
            return self._line_at
        if self._phase == "line":
            return self._line_at  # blanks so far: the line may still start a call
        return None

    def result(self, text: str) -> ParsedText:
        if self._failed or not self._spans:
            return ParsedText(text=text, problems=self._problems)
        parts: list[str] = []
        at = 0
        for start, stop in self._spans:
            parts.append(text[at:start])
            at = stop
        parts.append(text[at:])
        return ParsedText(text="".join(parts), calls=_blocks(self._calls), problems=self._problems)


def make_reader(mode: str, names: frozenset[str]) -> Reader:
    if mode == "whole":
        return WholeReader(names)
    if mode == "lines":
        return LineReader(json_units(names, walk_foreign=True))
    if mode == "heredoc":
        return LineReader(heredoc_units(names), all_or_nothing=True)
    raise ValueError(f"no reader for mode {mode!r}")  # pragma: no cover - caller checks
