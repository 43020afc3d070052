"""HTTP/1.1 on the wire, for the plain-http transport: a request's head written and
checked, an answer's head read, how its body is framed, and a chunked body decoded as
its bytes arrive. No I/O here (modelplug.plain_http does that), so every rule can be
tried on bytes alone.

The rules are h11's, the ones httpx2 keeps for every other connection: a request header
that could split the head is refused before anything is sent; an answer whose framing
is not clear (a folded header, two different Content-Lengths, a Transfer-Encoding other
than chunked) is a protocol error, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "MAX_HEAD",
    "Answer",
    "BadAnswer",
    "BadRequest",
    "Chunked",
    "Framing",
    "framing",
    "head_end",
    "keeps_alive",
    "parse_head",
    "request_head",
]

# An answer's head, or a chunk's size line and trailers, longer than this is refused
# (h11 allows 16 KiB; a proxy's or a framework's headers can be long).
MAX_HEAD = 64 * 1024

_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# A field value may hold visible characters, spaces and tabs; any other control byte
# (CR and LF above all) could end the line and start another.
_BAD_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
_BAD_TARGET = re.compile(rb"[\x00-\x20\x7f]")
_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")
_DIGITS = re.compile(rb"[0-9]{1,19}")


class BadRequest(ValueError):
    """A request this side will not write: it would not be one well-formed request."""


class BadAnswer(ValueError):
    """An answer that is not well-formed HTTP/1.x, or whose body's end is not clear."""


def request_head(method: bytes, target: bytes, headers: list[tuple[bytes, bytes]]) -> bytes:
    """The request line and headers, ending in the blank line.

    :raises BadRequest: a method or header name that is not a token, a target with a
        space or control byte, a header value with a control byte other than a tab.
    """
    if not _TOKEN.fullmatch(method):
        raise BadRequest(f"the method {method[:40]!r} is not an HTTP token")
    if not target or _BAD_TARGET.search(target):
        raise BadRequest("the request target is empty or holds a space or control byte")
    lines = [method, b" ", target, b" HTTP/1.1\r\n"]
    for name, value in headers:
        if not _TOKEN.fullmatch(name):
            raise BadRequest(f"the header name {name[:40]!r} is not an HTTP token")
        if _BAD_VALUE.search(value):
            # Never the value itself: it may be a key.
            raise BadRequest(f"the value of the header {name.decode()!r} holds a control byte")
        lines += (name, b": ", value, b"\r\n")
    lines.append(b"\r\n")
    return b"".join(lines)


def head_end(buffer: bytes | bytearray, start: int = 0) -> int:
    """Where the answer's head in ``buffer`` ends (the index after its blank line), or -1
    while it has not all arrived. ``start`` is where to look from: bytes already looked at
    (less the three a line end could straddle) need not be looked at again."""
    start = max(0, start - 3)
    ends = []
    for blank in (b"\r\n\r\n", b"\n\n", b"\n\r\n"):
        at = buffer.find(blank, start)
        if at >= 0:
            ends.append(at + len(blank))
    return min(ends, default=-1)


@dataclass(slots=True)
class Answer:
    """An answer's head: ``version`` (``b"HTTP/1.1"`` or ``b"HTTP/1.0"``), ``status``,
    ``reason`` and ``headers`` as sent (names as the server spelled them)."""

    version: bytes
    status: int
    reason: bytes
    headers: list[tuple[bytes, bytes]]

    def values(self, name: bytes) -> list[bytes]:
        """The comma-separated values of every header called ``name`` (lowercase),
        lowercased and stripped."""
        found: list[bytes] = []
        for key, value in self.headers:
            if key.lower() == name:
                found += (part.strip(b" \t").lower() for part in value.split(b","))
        return [part for part in found if part]


def parse_head(raw: bytes) -> Answer:
    """The answer whose head (as :func:`head_end` found it) is ``raw``.

    :raises BadAnswer: no HTTP/1.0 or 1.1 status line, a status that is not three
        digits, a folded or malformed header line.
    """
    lines = raw.split(b"\n")
    status_line = lines[0].rstrip(b"\r")
    parts = status_line.split(b" ", 2)
    # What the server sent is never quoted: a hostile one could echo a request's key.
    if len(parts) < 2 or parts[0] not in (b"HTTP/1.1", b"HTTP/1.0"):
        raise BadAnswer("the answer did not begin with an HTTP/1.0 or HTTP/1.1 status line")
    if len(parts[1]) != 3 or not parts[1].isdigit():
        raise BadAnswer("the answer's status is not three digits")
    headers = []
    for number, line in enumerate(lines[1:], start=1):
        line = line.rstrip(b"\r")
        if not line:
            break
        if line[:1] in (b" ", b"\t"):
            raise BadAnswer(f"the answer's header line {number} is folded (obsolete, refused)")
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.fullmatch(name):
            raise BadAnswer(f"the answer's header line {number} is not a name, a colon, a value")
        headers.append((name, value.strip(b" \t")))
    return Answer(parts[0], int(parts[1]), parts[2] if len(parts) == 3 else b"", headers)


@dataclass(slots=True, frozen=True)
class Framing:
    """How an answer's body ends: ``"none"`` (no body), ``"length"`` (``length``
    bytes), ``"chunked"``, or ``"close"`` (when the server closes the connection)."""

    kind: str
    length: int = 0


NO_BODY = Framing("none")


def framing(answer: Answer, method: bytes) -> Framing:
    """How the body of ``answer`` to a ``method`` request is framed (RFC 9112 6.3).

    :raises BadAnswer: a Transfer-Encoding other than chunked; Content-Lengths that
        disagree or are not numbers.
    """
    if method == b"HEAD" or answer.status in (204, 304) or answer.status < 200:
        return NO_BODY
    codings = answer.values(b"transfer-encoding")
    if codings:
        if codings != [b"chunked"]:
            raise BadAnswer("the answer's Transfer-Encoding is not chunked (not supported)")
        return Framing("chunked")
    lengths = set(answer.values(b"content-length"))
    if not lengths:
        return Framing("close")
    if len(lengths) > 1 or not _DIGITS.fullmatch(next(iter(lengths))):
        raise BadAnswer("the answer's Content-Length is not one number")
    length = int(next(iter(lengths)))
    return Framing("length", length) if length else NO_BODY


def keeps_alive(answer: Answer, body: Framing) -> bool:
    """Whether the connection may carry another request once this body is read. Not
    after a chunked answer that also gave a Content-Length: the body is read as chunked
    (RFC 9112 6.3), but a server that sends both may not agree where it ended."""
    if body.kind == "close" or answer.version != b"HTTP/1.1":
        return False
    if body.kind == "chunked" and answer.values(b"content-length"):
        return False
    return b"close" not in answer.values(b"connection")


class Chunked:
    """A chunked body, decoded as it arrives: :meth:`take` consumes what it can of the
    connection's buffer and returns the body bytes in it; :attr:`done` once the last
    chunk and the trailers (read, not kept) have come."""

    __slots__ = ("_left", "_state", "_trailers", "done")

    def __init__(self) -> None:
        self._state = "size"
        self._left = 0
        self._trailers = 0
        self.done = False

    def take(self, buffer: bytearray) -> bytes:
        """The body bytes in ``buffer`` (removed from it, with the framing around
        them); b"" when more must arrive first.

        :raises BadAnswer: a size line that is not hex, a chunk not followed by CRLF,
            a size line or trailers past :data:`MAX_HEAD`.
        """
        out: list[bytes] = []
        while buffer and not self.done:
            if self._state == "data":
                size = min(self._left, len(buffer))
                out.append(bytes(buffer[:size]))
                del buffer[:size]
                self._left -= size
                if not self._left:
                    self._state = "end"
            elif self._state == "end":
                if buffer[:2] == b"\r\n":
                    del buffer[:2]
                elif buffer[:1] == b"\n":
                    del buffer[:1]
                elif buffer == b"\r":
                    break
                else:
                    raise BadAnswer("a chunk of the answer's body did not end in CRLF")
                self._state = "size"
            else:
                line = self._line(buffer)
                if line is None:
                    break
                if self._state == "size":
                    self._size(line)
                elif not line:
                    self.done = True
        return b"".join(out)

    def _line(self, buffer: bytearray) -> bytes | None:
        end = buffer.find(b"\n")
        if end < 0:
            if len(buffer) + self._trailers > MAX_HEAD:
                raise BadAnswer("a chunk size line or the trailers of the answer are too long")
            return None
        self._trailers += end + 1 if self._state == "trailers" else 0
        if end + 1 > MAX_HEAD or self._trailers > MAX_HEAD:
            raise BadAnswer("a chunk size line or the trailers of the answer are too long")
        line = bytes(buffer[:end]).rstrip(b"\r")
        del buffer[: end + 1]
        return line

    def _size(self, line: bytes) -> None:
        size = line.split(b";", 1)[0].strip(b" \t")
        if not _HEX.fullmatch(size):
            raise BadAnswer("a chunk size line of the answer does not begin with a hex number")
        self._left = int(size, 16)
        self._state = "data" if self._left else "trailers"
