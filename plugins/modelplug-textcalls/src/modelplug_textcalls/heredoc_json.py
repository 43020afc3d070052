"""json-loose-heredoc: JSON, read loosely, with a raw body as one more way to write a string.

This is the reader of the ``heredoc`` dialect's own argument syntax, resumable as the
reply streams in. It is not a repair of broken JSON: that is core's one
``modelplug.repair_loose_json``, which provider plugins apply to the arguments
of real tool calls.

The loose parts are the ones models get wrong in harmless ways: unquoted keys, single
quotes, trailing commas, Python's True/False/None. The one new form is the raw body,
for long strings that would need escaping::

    { path: "src/Hello.java", retries: 3,
      content: java~~~
    public class Hello {}
    ~~~AGENTKIT_EOF_7F3A
    }

A body opens with ``~~~`` (after an optional type tag from :data:`HEREDOC_TYPES`; the
opener may also repeat the whole sentinel) at the end of its line, and ends at a line
that is exactly :data:`HEREDOC_SENTINEL`. A ``json`` body is read as a JSON value; any
other tag makes it a string and is passed on as ``"<key>_type"``. A comma after a body
may be left out.

What the reader never does is close something that was left open: an unclosed object,
string, opener line or body raises :class:`HeredocTruncatedError`, a character that
cannot be JSON raises :class:`HeredocSyntaxError`. The reader is resumable: feeding it a
growing text costs O(new text) per call.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .calls import MAX_DEPTH, NotACall, decode_json
from .errors import HeredocSyntaxError, HeredocTruncatedError
from .scan import LINE_BLANKS, WHITESPACE, Rejected, match_literal, skip_blanks

__all__ = [
    "HEREDOC_OPEN",
    "HEREDOC_SENTINEL",
    "HEREDOC_TYPES",
    "LooseHeredocReader",
    "parse_loose_heredoc_json",
]

HEREDOC_OPEN = "~~~"
HEREDOC_SENTINEL = "~~~AGENTKIT_EOF_7F3A"
# Closed on purpose: an open set lets a model put an argument's value in the tag slot.
HEREDOC_TYPES = frozenset(
    ("go", "java", "js", "json", "md", "py", "sh", "sql", "txt", "xml", "yaml")
)

_CUT = "(generation was cut off; the call was NOT completed)"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER_CHARS = re.compile(r"[-+0-9.eE]+")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_DOUBLE_STOP = re.compile(r'["\\\x00-\x1f]')
_SINGLE_STOP = re.compile(r"['\"\\\x00-\x1f]")
_WORDS = {
    "true": "true",
    "True": "true",
    "false": "false",
    "False": "false",
    "null": "null",
    "None": "null",
}
_MAX_TOKEN = 256
_MAX_OPENER = 64


class _Context:
    """One open object or array: its closer and, for objects, the key being filled."""

    __slots__ = ("closer", "expect_key", "key")

    def __init__(self, closer: str) -> None:
        self.closer = closer
        self.expect_key = closer == "}"
        self.key: str | None = None


class LooseHeredocReader:
    """Rewrites one json-loose-heredoc object or array, starting at ``start``, to strict JSON.

    Call :meth:`feed` with the growing text; it returns the index just past the value
    once the value is closed, None while more text is needed (with ``final=True`` it
    raises :class:`HeredocTruncatedError` instead). :attr:`strict` is then the JSON text.
    """

    def __init__(self, start: int) -> None:
        self.pos = start
        self.strict = ""
        self._mode = "normal"
        self._out: list[str] = []
        self._stack: list[_Context] = []
        self._word: str | None = None
        self._word_adjacent = False
        self._comma_pending = False
        self._after_body = False
        self._token_at = 0
        self._raw_control_at = -1
        self._parts: list[str] = []
        self._body_type: str | None = None
        self._opener_at = 0
        self._body_at = 0
        self._search_at = 0

    # -- driving -------------------------------------------------------------------

    def feed(self, text: str, final: bool) -> int | None:
        while True:
            mode = self._mode
            if mode == "normal":
                outcome = self._normal(text, final)
            elif mode == "double":
                outcome = self._double(text)
            elif mode == "single":
                outcome = self._single(text)
            elif mode == "opener":
                outcome = self._opener(text, final)
            else:
                outcome = self._body(text, final)
            if isinstance(outcome, int):
                self.strict = "".join(self._out)
                self._out = []
                return outcome
            if outcome == "wait":
                if final:
                    raise HeredocTruncatedError(self._cut_message())
                return None

    def _cut_message(self) -> str:
        what = {
            "normal": "the object is never closed",
            "double": "a string is never closed",
            "single": "a string is never closed",
            "opener": "a ~~~ body opener line never ends",
            "body": f"a ~~~ body is never ended by the line {HEREDOC_SENTINEL}",
        }[self._mode]
        return f"{what} {_CUT}"

    def _syntax(self, at: int, why: str) -> HeredocSyntaxError:
        self.pos = at  # where reading stopped, whatever the deltas were
        return HeredocSyntaxError(f"{why} (at character {at})")

    # -- outside strings -----------------------------------------------------------

    def _normal(self, text: str, final: bool) -> str | int:
        i = self.pos
        end = len(text)
        out = self._out
        stack = self._stack
        while i < end:
            c = text[i]
            if self._word is not None:
                if c == "~" and self._word_adjacent:
                    return self._body_opener(text, i)
                if c in WHITESPACE:
                    self._word_adjacent = False
                    i += 1
                    continue
                word, self._word = self._word, None
                if c == ":":
                    self._key_done(json.dumps(word), word)
                elif word in _WORDS:
                    out.append(_WORDS[word])
                else:
                    raise self._syntax(
                        i, f"bare word {word!r} is not a value; quote strings or use a ~~~ body"
                    )
            if c in WHITESPACE:
                # One space keeps tokens apart: "1 2" must not become 12.
                if out and out[-1] != " ":
                    out.append(" ")
                i += 1
                continue
            if self._comma_pending:
                self._comma_pending = False
                if c not in "}]":
                    out.append(",")  # otherwise a trailing comma: dropped
            elif self._after_body:
                self._after_body = False
                if c not in ",}]":
                    out.append(",")  # the comma after a body may be left out
            if c == "{" or c == "[":
                if len(stack) >= MAX_DEPTH:
                    raise self._syntax(i, f"nested deeper than {MAX_DEPTH} levels")
                stack.append(_Context("}" if c == "{" else "]"))
                out.append(c)
                i += 1
            elif c == "}" or c == "]":
                if not stack or stack[-1].closer != c:
                    raise self._syntax(i, f"unmatched {c!r}")
                stack.pop()
                out.append(c)
                i += 1
                if not stack:
                    self.pos = i
                    return i
            elif c == ",":
                if not stack:
                    raise self._syntax(i, "a comma outside any object or array")
                self._comma_pending = True
                stack[-1].expect_key = stack[-1].closer == "}"
                i += 1
            elif c == ":":
                out.append(":")
                if stack:
                    stack[-1].expect_key = False
                i += 1
            elif c == '"' or c == "'":
                self._mode = "double" if c == '"' else "single"
                self._token_at = i
                self._raw_control_at = -1
                self._parts = []
                self.pos = i + 1
                return "more"
            elif c == "~":
                return self._body_opener(text, i)
            elif c.isascii() and (c.isalpha() or c == "_"):
                j = self._token_end(_IDENT, "a bare word", text, i, final)
                if j is None:
                    return "wait"
                self._word = text[i:j]
                self._word_adjacent = True
                i = j
            elif c == "-" or (c.isdigit() and c.isascii()):
                j = self._token_end(_NUMBER_CHARS, "a number", text, i, final)
                if j is None:
                    return "wait"
                token = text[i:j]
                if not _NUMBER.fullmatch(token):
                    raise self._syntax(i, f"{token!r} is not a number")
                out.append(token)
                i = j
            else:
                raise self._syntax(i, f"unexpected character {c!r}")
        self.pos = i
        return "wait"

    def _token_end(
        self, token: re.Pattern[str], what: str, text: str, at: int, final: bool
    ) -> int | None:
        """Where the ``token`` at ``at`` ends; None while it may still go on."""
        match = token.match(text, at)
        stop = match.end() if match else at + 1
        if stop - at > _MAX_TOKEN:
            raise self._syntax(at, f"{what} that long is not JSON")
        if stop == len(text) and not final:
            self.pos = at
            return None
        return stop

    def _key_done(self, token: str, key: str) -> None:
        self._out.append(token)
        if self._stack and self._stack[-1].expect_key:
            self._stack[-1].key = key

    # -- strings -------------------------------------------------------------------

    def _double(self, text: str) -> str:
        i = self.pos
        end = len(text)
        while True:
            match = _DOUBLE_STOP.search(text, i)
            if match is None:
                self.pos = end
                return "wait"
            i = match.start()
            c = text[i]
            if c == '"':
                self._string_done(text[self._token_at : i + 1], i)
                self.pos = i + 1
                return "more"
            if c != "\\":
                self._note_raw_control(i)
                i += 1
                continue
            if i + 1 >= end:
                self.pos = i  # the escaped character has not arrived yet
                return "wait"
            i += 2

    def _single(self, text: str) -> str:
        # Rewritten into a double-quoted string: a bare " gets escaped, \' loses its
        # backslash, other escapes are kept as JSON reads them.
        i = self.pos
        end = len(text)
        parts = self._parts
        while True:
            match = _SINGLE_STOP.search(text, i)
            if match is None:
                parts.append(text[i:end])
                self.pos = end
                return "wait"
            stop = match.start()
            parts.append(text[i:stop])
            c = text[stop]
            if c == "'":
                self._string_done('"' + "".join(parts) + '"', stop)
                self.pos = stop + 1
                return "more"
            if c == '"':
                parts.append('\\"')
                i = stop + 1
            elif c == "\\":
                if stop + 1 >= end:
                    self.pos = stop
                    return "wait"
                escaped = text[stop + 1]
                parts.append("'" if escaped == "'" else "\\" + escaped)
                i = stop + 2
            else:
                self._note_raw_control(stop)
                parts.append(c)
                i = stop + 1

    def _note_raw_control(self, at: int) -> None:
        # Not an error yet: a string that never closes is truncation, whatever it
        # holds. One that closes with a raw line break inside is a syntax error.
        if self._raw_control_at < 0:
            self._raw_control_at = at

    def _string_done(self, token: str, at: int) -> None:
        if self._raw_control_at >= 0:
            raise self._syntax(self._raw_control_at, _RAW_CONTROL)
        self._mode = "normal"
        self._out.append(token)
        if self._stack and self._stack[-1].expect_key:
            try:
                self._stack[-1].key = json.loads(token)
            except ValueError:
                raise self._syntax(at, f"bad escape in the key {token}") from None

    # -- raw bodies ----------------------------------------------------------------

    def _body_opener(self, text: str, at: int) -> str:
        """Open a body at the ``~`` at ``at``; the word just read, if any, is its type tag."""
        # Not final even at the end: a cut-off ``~~`` is the truncation feed reports.
        opener = match_literal(text, at, (HEREDOC_OPEN,), final=False)
        if opener is None:
            self.pos = at
            return "wait"
        if isinstance(opener, Rejected):
            after = "" if self._word is None else f" after {self._word!r}"
            raise self._syntax(at, f"unexpected '~'{after}")
        self._open_body(self._word, at)
        self._word = None
        return "more"

    def _open_body(self, type_tag: str | None, at: int) -> None:
        if type_tag is not None and type_tag not in HEREDOC_TYPES:
            kinds = ", ".join(sorted(HEREDOC_TYPES))
            raise self._syntax(at, f"unknown body type {type_tag!r}; use one of {kinds}")
        if self._stack and self._stack[-1].expect_key:
            raise self._syntax(at, "a ~~~ body can only be a value, not a key")
        self._body_type = type_tag
        self._opener_at = at + len(HEREDOC_OPEN)
        self._mode = "opener"

    def _opener(self, text: str, final: bool) -> str:
        at = self._opener_at
        newline = text.find("\n", at, at + _MAX_OPENER + 1)
        if newline < 0:
            if len(text) - at > _MAX_OPENER:
                raise self._syntax(at, _OPENER_RULE)
            return "wait"
        rest = text[at:newline].rstrip(" \t\r")
        if rest not in ("", HEREDOC_SENTINEL[len(HEREDOC_OPEN) :]):
            raise self._syntax(at, _OPENER_RULE)
        self._body_at = self._search_at = newline + 1
        self._mode = "body"
        return "more"

    def _body(self, text: str, final: bool) -> str:
        end = len(text)
        while True:
            k = text.find(HEREDOC_SENTINEL, self._search_at)
            if k < 0:
                self._search_at = max(self._body_at, end - len(HEREDOC_SENTINEL) + 1)
                return "wait"
            if k > self._body_at and text[k - 1] != "\n":
                self._search_at = k + 1  # the sentinel must start its line
                continue
            j = skip_blanks(text, k + len(HEREDOC_SENTINEL), LINE_BLANKS)
            if j == end and not final:
                self._search_at = k  # the line may still go on
                return "wait"
            if j < end and text[j] != "\n":
                self._search_at = k + 1  # the line holds more than the sentinel
                continue
            body = text[self._body_at : k - 1] if k > self._body_at else ""
            self._body_done(body, k)
            self.pos = j
            self._mode = "normal"
            self._after_body = True
            return "more"

    def _body_done(self, body: str, at: int) -> None:
        context = self._stack[-1] if self._stack else None
        key = context.key if context is not None and context.closer == "}" else None
        if self._body_type == "json":
            try:
                value: Any = decode_json(body)
            except NotACall as exc:
                where = f" of {key!r}" if key is not None else ""
                raise self._syntax(at, f"the json body{where} is {exc}") from None
            self._out.append(json.dumps(value, ensure_ascii=False))
            return
        self._out.append(json.dumps(body, ensure_ascii=False))
        if self._body_type is not None and key is not None:
            self._out.append(f",{json.dumps(key + '_type')}:{json.dumps(self._body_type)}")


_RAW_CONTROL = (
    "a raw line break or control character inside a quoted string; "
    "use a ~~~ body for text over several lines"
)
_OPENER_RULE = (
    "a ~~~ body opener must end its line: write `key: <type>~~~`, the body on the "
    f"next lines, then {HEREDOC_SENTINEL} alone on a line"
)


def parse_loose_heredoc_json(text: str) -> str:
    """Rewrite one json-loose-heredoc object or array to strict JSON text.

    :raises HeredocTruncatedError: an object, string or body is never closed.
    :raises HeredocSyntaxError: anything else that is not json-loose-heredoc.
    """
    start = skip_blanks(text, 0, WHITESPACE)
    if start == len(text) or text[start] not in "{[":
        raise HeredocSyntaxError("no JSON object or array found")
    reader = LooseHeredocReader(start)
    end = reader.feed(text, final=True)
    assert end is not None  # feed(final=True) raises rather than wait
    if skip_blanks(text, end, WHITESPACE) < len(text):
        raise HeredocSyntaxError(f"text after the value (at character {end})")
    check_strict(reader.strict)
    return reader.strict


def check_strict(strict: str) -> Any:
    """Decode the rewritten text; a rewrite that is not strict JSON is a syntax error."""
    try:
        return decode_json(strict)
    except NotACall as exc:
        shown = strict if len(strict) <= 200 else strict[:200] + "..."
        raise HeredocSyntaxError(f"the arguments are {exc} after rewriting: {shown}") from None
