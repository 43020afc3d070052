"""The ``heredoc`` dialect: ``@@call <name>``, one json-loose-heredoc object, ``@@end``.

::

    @@call write_file
    { path: "src/Hello.java", content: java~~~
    public class Hello {}
    ~~~AGENTKIT_EOF_7F3A
    }
    @@end

The ``@@call`` line must start a line. The object closes itself, so ``@@end`` is taken
when it follows (it is also the stop sequence a server strips, see
:func:`close_heredoc`) and not required. A call that is cut off stays text and its
problem starts with ``truncated:``.
"""

from __future__ import annotations

from .calls import Call, names_hint
from .errors import HeredocError, HeredocTruncatedError
from .heredoc_json import LooseHeredocReader, check_strict
from .scan import LINE_BLANKS, WHITESPACE, Finished, Rejected, Step, match_literal, skip_blanks

__all__ = ["CALL_PREFIX", "HEREDOC_END", "HeredocUnit", "close_heredoc", "heredoc_stop"]

CALL_PREFIX = "@@call "
HEREDOC_END = "@@end"
TRUNCATED = "truncated: "

_MAX_NAME_LINE = 256


def _is_end_line(text: str, at: int, final: bool) -> bool | None:
    """Whether an @@end line starts at ``at``; None while the text cannot tell yet."""
    step = match_literal(text, at, (HEREDOC_END,), final)
    if not isinstance(step, Finished):
        return None if step is None else False
    blanks_end = skip_blanks(text, step.end, LINE_BLANKS)
    if blanks_end == len(text):
        return True if final else None
    return text[blanks_end] == "\n"


def heredoc_stop() -> list[str]:
    """The stop sequence to send with a heredoc grammar: the server ends on ``@@end``."""
    return [HEREDOC_END]


def close_heredoc(raw: str) -> str:
    """Put back the ``@@end`` a stop sequence consumed, so the text reads as ended.

    Only the terminator is added: an object, string or body left open stays open and
    is still reported as truncation.
    """
    if HEREDOC_END in raw:
        return raw
    return raw.rstrip("\n") + "\n" + HEREDOC_END + "\n"


class HeredocUnit:
    """One ``@@call`` block, read as it streams."""

    def __init__(self, start: int, names: frozenset[str]) -> None:
        self.start = start
        self.held = True
        self._names = names
        self._state = "prefix"
        self._name = ""
        self._at = start
        self._newline_at = 0
        self._reader: LooseHeredocReader | None = None
        self._calls: list[Call] = []

    def _problem(self, error: HeredocError | str) -> str:
        lead = TRUNCATED if isinstance(error, HeredocTruncatedError) else ""
        name = f" {self._name}" if self._name else ""
        return f"{lead}@@call{name} at character {self.start}: {error}"

    def feed(self, text: str, final: bool) -> Step:
        end = len(text)
        if self._state == "prefix":
            prefixed = match_literal(text, self.start, (CALL_PREFIX,), final)
            if not isinstance(prefixed, Finished):
                return prefixed
            self._at = prefixed.end
            self._state = "name"
        if self._state == "name":
            step = self._read_name(text, final)
            if step is not None or self._state == "name":
                return step
        if self._state == "seek-object":
            i = self._at = skip_blanks(text, self._at, WHITESPACE)
            if i == end:
                if final:
                    cut = HeredocTruncatedError("no arguments follow (generation was cut off)")
                    return Rejected(end, self._problem(cut))
                return None
            if text[i] != "{":
                why = f"the arguments must be a json-loose-heredoc object, found {text[i]!r}"
                return Rejected(i, self._problem(why))
            self._reader = LooseHeredocReader(i)
            self._state = "object"
        if self._state == "object":
            step = self._read_object(text, final)
            if step is not None or self._state == "object":
                return step
        return self._find_end(text, final)

    def _read_name(self, text: str, final: bool) -> Step:
        at = self._at
        newline = text.find("\n", at, at + _MAX_NAME_LINE + 1)
        if newline < 0:
            if len(text) - at > _MAX_NAME_LINE:
                return Rejected(at, self._problem("the tool name line is too long"))
            if final:
                cut = HeredocTruncatedError("no arguments follow (generation was cut off)")
                self._name = text[at:].strip()
                return Rejected(len(text), self._problem(cut))
            return None
        self._name = text[at:newline].strip()
        if not self._name:
            return Rejected(newline, self._problem("no tool name"))
        if self._name not in self._names:
            why = f"unknown tool; {names_hint(tuple(self._names))}"
            return Rejected(newline, self._problem(why))
        self._at = newline + 1
        self._state = "seek-object"
        return None

    def _read_object(self, text: str, final: bool) -> Step:
        reader = self._reader
        assert reader is not None
        try:
            end = reader.feed(text, final)
            if end is None:
                return None
            arguments = check_strict(reader.strict)
        except HeredocTruncatedError as exc:
            return Rejected(len(text), self._problem(exc))  # the rest is the cut-off call
        except HeredocError as exc:
            return Rejected(reader.pos, self._problem(exc))
        if not isinstance(arguments, dict):  # pragma: no cover - the reader starts at "{"
            return Rejected(end, self._problem("the arguments must be an object"))
        self._calls = [(self._name, arguments)]
        self._at = end
        self._state = "after-object"
        return None

    def _find_end(self, text: str, final: bool) -> Step:
        end = len(text)
        if self._state == "after-object":
            # The rest of the object's line: blanks, or @@end.
            i = self._at = skip_blanks(text, self._at, LINE_BLANKS)
            if i == end:
                return Finished(end, self._calls) if final else None
            if text[i] != "\n":
                why = "text follows the arguments on their line"
                return self._end_line_or(text, i, final, Rejected(i, self._problem(why)))
            self._newline_at = i
            self._at = i + 1
            self._state = "seek-end"
        # Blank lines, then maybe @@end on its own line.
        i = self._at = skip_blanks(text, self._at, WHITESPACE)
        if i == end:
            return Finished(self._newline_at, self._calls) if final else None
        return self._end_line_or(text, i, final, Finished(self._newline_at, self._calls))

    def _end_line_or(self, text: str, at: int, final: bool, otherwise: Step) -> Step:
        """The call ends after an @@end at ``at``; ``otherwise`` once it is known not to."""
        is_end = _is_end_line(text, at, final)
        if is_end:
            return Finished(at + len(HEREDOC_END), self._calls)
        return None if is_end is None else otherwise
