"""Split a byte stream of newline-delimited JSON (NDJSON) into whole lines.

The sibling of :mod:`modelplug_kit.sse` for wires that send one JSON document per line
(Ollama's ``/api/chat``, ``application/x-ndjson``): a provider plugin feeds it each
network chunk and gets back the lines that chunk completed. A chunk may end inside a
line, or inside a multi-byte character: both are kept until the rest arrives. The
framer does not parse JSON; the caller parses each line once.
"""

from __future__ import annotations

import codecs

__all__ = ["NDJSONFramer"]


class NDJSONFramer:
    """Feed bytes in, take whole lines out.

    >>> framer = NDJSONFramer()
    >>> framer.feed(b'{"a": 1}\\n{"b"')
    ['{"a": 1}']
    >>> framer.feed(b': 2}\\n')
    ['{"b": 2}']

    Lines come without their line end (``\\n`` or ``\\r\\n``). Empty lines are not
    returned; a line of only spaces is (the caller's JSON reader decides about it).
    """

    __slots__ = ("_decode", "_rest")

    def __init__(self) -> None:
        # Invalid UTF-8 becomes U+FFFD rather than an exception: the JSON reader then
        # reports the broken line, with the rest of the stream intact.
        self._decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        self._rest = ""

    @property
    def pending(self) -> str:
        """Text of a line whose newline has not arrived (at the end of a stream: what a
        cut connection left unfinished)."""
        return self._rest

    def feed(self, chunk: bytes) -> list[str]:
        """The lines ``chunk`` completed, in order."""
        piece = self._rest + self._decode(chunk) if self._rest else self._decode(chunk)
        if "\n" not in piece:
            self._rest = piece
            return []
        if "\r" in piece:
            piece = piece.replace("\r\n", "\n")
        lines = piece.split("\n")
        self._rest = lines.pop()
        if "" in lines:
            return [line for line in lines if line]
        return lines

    def close(self) -> list[str]:
        """The line left when the stream ended: a last line without its newline still
        counts (a server may end on one), unless it is only whitespace."""
        rest, self._rest = self._rest + self._decode(b"", final=True), ""
        rest = rest.rstrip("\r")
        return [rest] if rest.strip() else []
