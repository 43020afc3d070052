"""Resumable readers for one piece of text that may be a call: a JSON value, a fence, a tag.

A unit starts at a known index and is fed the growing reply. Each ``feed`` only looks at
characters it has not looked at before, so reading a whole reply costs O(its length)
however it is split into deltas. ``feed`` answers None (need more text), a
:class:`Finished` (the unit is calls; ``end`` is the index just past it) or a
:class:`Rejected` (the unit is text; reading resumes at ``pos``; ``problem`` says why
when the text looked like a call, None when it merely started like one).

While a unit is undecided its text is held. ``held`` turns False for text that is known
to be prose but still has to be walked to its end (a fence of another language, whose
body must not be read for calls).
"""

from __future__ import annotations

import re
from typing import Protocol

from .calls import CALL_KEYS, MAX_DEPTH, NotACall, calls_in, decode_json, decode_json_values
from .scan import LINE_BLANKS, WHITESPACE, Finished, Rejected, Step, match_literal, skip_blanks

__all__ = ["FenceUnit", "JsonUnit", "TagUnit", "Unit"]


class Unit(Protocol):
    start: int
    held: bool

    def feed(self, text: str, final: bool) -> Step: ...


# -------------------------------------------------------------------------- JSON value

# Inside a string only a quote, a backslash or a raw control character matters.
_STRING_STOP = re.compile(r'["\\\x00-\x1f]')
# Outside strings JSON has brackets, quotes, and characters of numbers, literals and
# punctuation. Anything else (a letter of prose, say) proves the text is not JSON.
_OUTSIDE_STOP = re.compile(r"[^ \t\r\n0-9+\-.eEtrufalsn,:]")
# A call's first key with its closing quote, so the key cannot go on past it.
_FIRST_KEYS = tuple(f'{key}"' for key in CALL_KEYS)
# Before the first key: the character each state waits for (after blanks), and the next state.
_OPENING_NEXT = {"array": ("{", "object"), "object": ('"', "key")}


class JsonUnit:
    """A JSON object or array written as a call: ``{"name": ...}`` or ``[{"name": ...}]``.

    Two cheap checks rule prose out early, so text such as ``[1] see`` or ``{x}`` is
    shown at once: the opening must read ``{"name"``, ``{"arguments"`` or
    ``{"parameters"`` (or ``[`` then such an object), and the text must stay JSON-shaped
    (balanced brackets, no raw newline in a string, no stray letters).
    """

    def __init__(self, start: int, names: frozenset[str]) -> None:
        self.start = start
        self.held = True
        self._names = names
        # The opening check and the bracket scan keep separate positions.
        self._open_at = start + 1
        self._open_state = "start"
        self._at = start
        self._stack: list[str] = []
        self._in_string = False

    @property
    def _settled(self) -> bool:
        return self._open_state == "settled"

    def feed(self, text: str, final: bool) -> Step:
        if not self._settled:
            rejected = self._check_opening(text, final)
            if rejected is not None:
                return rejected
        step = self._scan(text)
        if step is not None:
            return step
        if final:
            problem = f"JSON at character {self.start} is never closed" if self._settled else None
            return Rejected(len(text), problem)
        return None

    def _check_opening(self, text: str, final: bool) -> Rejected | None:
        if self._open_state == "start":
            self._open_state = "array" if text[self.start] == "[" else "object"
        while self._open_state in _OPENING_NEXT:
            want, then = _OPENING_NEXT[self._open_state]
            i = self._open_at = skip_blanks(text, self._open_at, WHITESPACE)
            if i == len(text):
                return None
            if text[i] != want:
                return Rejected(i)
            self._open_at, self._open_state = i + 1, then
        step = match_literal(text, self._open_at, _FIRST_KEYS, final)
        if isinstance(step, Finished):
            self._open_state = "settled"
            return None
        return step

    def _reject(self, at: int, why: str) -> Rejected:
        problem = f"JSON at character {self.start} {why}" if self._settled else None
        return Rejected(at, problem)

    def _scan(self, text: str) -> Step:
        i = self._at
        end = len(text)
        stack = self._stack
        while i < end:
            if self._in_string:
                match = _STRING_STOP.search(text, i)
                if match is None:
                    i = end
                    break
                i = match.start()
                c = text[i]
                if c == '"':
                    self._in_string = False
                    i += 1
                elif c == "\\":
                    if i + 1 >= end:
                        break  # the escaped character has not arrived yet
                    i += 2
                else:
                    return self._reject(i, "has a raw control character inside a string")
            else:
                match = _OUTSIDE_STOP.search(text, i)
                if match is None:
                    i = end
                    break
                i = match.start()
                c = text[i]
                if c == "{" or c == "[":
                    stack.append(c)
                    if len(stack) > MAX_DEPTH:
                        return self._reject(i, f"is nested deeper than {MAX_DEPTH} levels")
                elif c == "}" or c == "]":
                    if not stack or stack.pop() != ("{" if c == "}" else "["):
                        return self._reject(i, f"has an unmatched {c!r}")
                    if not stack:
                        self._at = i + 1
                        return self._complete(text, i + 1)
                elif c == '"':
                    self._in_string = True
                else:
                    return self._reject(i, f"has an unexpected character {c!r}")
                i += 1
        self._at = i
        return None

    def _complete(self, text: str, end: int) -> Step:
        try:
            calls = calls_in([decode_json(text[self.start : end])], self._names)
        except NotACall as exc:
            return self._reject(end, f"is not a call: {exc}")
        return Finished(end, calls)


# ---------------------------------------------------------------------------- fence

_FENCE_CLOSE = re.compile(r"[ \t]*(`{3,})[ \t\r]*")
_MAX_INFO = 64
# What ends a foreign fence's opener line, or shows that it was no fence.
_OPENER_REST = re.compile(r"[`\n]")


def _info_is_json(info: str) -> bool | None:
    """Whether a fence's info string is ``json`` in any case; None while it may become it."""
    # casefold, not lower: it reads "ſ" as "s", as a case-blind regex would.
    folded = info.casefold()
    step = match_literal(folded, skip_blanks(folded, 0, " \t"), ("json",), final=False)
    if step is None:
        return None
    if isinstance(step, Rejected):
        return False
    return skip_blanks(folded, step.end, LINE_BLANKS) == len(folded)


class FenceUnit:
    """A fenced block: `````json`` holds calls; a fence of another language is text.

    The fence ends at a line of at least as many backticks as opened it (markdown's
    rule), so a failing ```json block and a ```python block stay text as a whole. With
    ``walk_foreign`` (lines mode) another language's fence is walked to its end without
    being held, so nothing inside it is read as a call; otherwise it is rejected at once.
    """

    def __init__(self, start: int, names: frozenset[str], walk_foreign: bool) -> None:
        self.start = start
        self.held = True
        self._names = names
        self._walk_foreign = walk_foreign
        self._state = "run"
        self._run = 0
        self._info_at = start
        self._body_at = 0
        self._line_at = 0
        self._scan_at = 0

    def feed(self, text: str, final: bool) -> Step:
        end = len(text)
        if self._state == "run":
            j = self._info_at  # how far the run of backticks has been counted
            while j < end and text[j] == "`":
                j += 1
            self._info_at = j
            if j == end and not final:
                return None
            self._run = j - self.start
            if self._run < 3:
                return Rejected(j)  # inline code such as `x` or ``x``
            self._info_at = j
            self._state = "info"
        if self._state == "info":
            step = self._read_info(text, final)
            if step is not None or self._state == "info":
                return step
        return self._find_close(text, final)

    def _read_info(self, text: str, final: bool) -> Step:
        # Decided from the opener line alone, the same however the reply was cut: a
        # stream that went on before the line ended must come to what the whole reply
        # comes to.
        at = self._info_at
        end = len(text)
        newline = text.find("\n", at, at + _MAX_INFO + 1)
        info = text[at : newline if newline >= 0 else min(end, at + _MAX_INFO + 1)]
        if "`" in info:
            return Rejected(at)  # ```x``` on one line is inline code, not a fence
        # An info string longer than _MAX_INFO is never json: a stream has to decide
        # before such a line ends, so a whole reply decides the same.
        too_long = newline < 0 and end - at > _MAX_INFO
        is_json = False if too_long else _info_is_json(info)
        if newline < 0 and not final and is_json is not False:
            return None  # may still be ```json
        if is_json:
            if newline < 0:
                return Rejected(end, f"```json fence at character {self.start} is never closed")
            self._state = "body"
            self._body_at = self._line_at = self._scan_at = newline + 1
            return None
        return self._foreign()

    def _foreign(self) -> Step:
        if not self._walk_foreign:
            return Rejected(self._info_at)
        # Shown at once: it is text whatever the rest of its opener line says. The
        # rest of that line is still read: a backtick there makes it inline code.
        self.held = False
        self._state = "foreign-opener"
        self._scan_at = self._info_at
        return None

    def _find_close(self, text: str, final: bool) -> Step:
        end = len(text)
        if self._state == "foreign-opener":
            stop = _OPENER_REST.search(text, self._scan_at)
            if stop is None:
                self._scan_at = end
                return Rejected(end) if final else None
            if stop.group() == "`":
                return Rejected(self._info_at)  # a backtick in its info string: not a fence
            self._state = "body"
            self._body_at = self._line_at = self._scan_at = stop.end()
        while True:
            line_at = self._line_at
            newline = text.find("\n", self._scan_at)
            if newline < 0 and not final:
                self._scan_at = end
                return None
            line_end = newline if newline >= 0 else end
            close = _FENCE_CLOSE.fullmatch(text, line_at, line_end)
            if close is not None and len(close.group(1)) >= self._run:
                return self._complete(text, line_at, line_end)
            if newline < 0:
                if not self.held:
                    return Rejected(end)
                return Rejected(end, f"```json fence at character {self.start} is never closed")
            self._line_at = self._scan_at = newline + 1

    def _complete(self, text: str, close_at: int, end: int) -> Step:
        if not self.held:
            return Rejected(end)
        try:
            values = decode_json_values(text[self._body_at : close_at])
            calls = calls_in(values, self._names)
        except NotACall as exc:
            return Rejected(end, f"```json fence at character {self.start} is not calls: {exc}")
        return Finished(end, calls)


# ------------------------------------------------------------------------------ tag

TAG_OPEN = "<tool_call>"
TAG_CLOSE = "</tool_call>"


class TagUnit:
    """``<tool_call>`` ... ``</tool_call>`` holding one or more calls (Qwen's habit)."""

    def __init__(self, start: int, names: frozenset[str]) -> None:
        self.start = start
        self.held = True
        self._names = names
        self._body_at = -1
        self._search_at = 0

    def feed(self, text: str, final: bool) -> Step:
        end = len(text)
        if self._body_at < 0:
            opened = match_literal(text, self.start, (TAG_OPEN,), final)
            if not isinstance(opened, Finished):
                return opened
            self._body_at = self._search_at = opened.end
        close = text.find(TAG_CLOSE, self._search_at)
        if close < 0:
            if final:
                return Rejected(end, f"<tool_call> at character {self.start} is never closed")
            self._search_at = max(self._body_at, end - len(TAG_CLOSE) + 1)
            return None
        stop = close + len(TAG_CLOSE)
        try:
            calls = calls_in(decode_json_values(text[self._body_at : close]), self._names)
        except NotACall as exc:
            return Rejected(stop, f"<tool_call> at character {self.start} is not calls: {exc}")
        return Finished(stop, calls)
