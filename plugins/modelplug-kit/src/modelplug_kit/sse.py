"""Split a byte stream of server-sent events into whole events.

One framer serves every SSE wire (Chat Completions, the Responses API, Gemini's
``alt=sse``): a provider plugin feeds it each network chunk and gets back the events
that chunk completed, as ``(event, data)`` pairs. The common event, a single
``data:`` line, costs one split and one slice, and so does an ``event:`` line followed
by one ``data:`` line; comments, ``id:`` fields and data spread over several lines
take the slow way.

Two non-standard habits are read too, since real servers have them: bare ``\\r``
line ends are folded like ``\\r\\n``, and an ``error:`` field (llama.cpp reports a
failure after a 200 that way) becomes an event named ``error`` whose data is the
field's value.
"""

from __future__ import annotations

import codecs

__all__ = ["SSEFramer"]


class SSEFramer:
    """Feed bytes in, take whole events out.

    >>> framer = SSEFramer()
    >>> framer.feed(b'data: {"a": 1}\\n\\ndata: {"b"')
    [('', '{"a": 1}')]
    >>> framer.feed(b': 2}\\n\\n')
    [('', '{"b": 2}')]

    ``event`` is ``""`` for an unnamed event (the SSE default, ``message``). An event
    with no data line (a comment, a keep-alive) is not returned.
    """

    __slots__ = ("_decode", "_rest")

    def __init__(self) -> None:
        # Invalid UTF-8 becomes U+FFFD rather than an exception: the JSON reader then
        # reports the broken event, with the rest of the stream intact.
        self._decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        self._rest = ""

    @property
    def pending(self) -> str:
        """Text of an event whose blank line has not arrived (at the end of a stream:
        what a cut connection left unfinished)."""
        return self._rest.rstrip("\r")

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        """The events ``chunk`` completed, in order."""
        piece = self._rest + self._decode(chunk) if self._rest else self._decode(chunk)
        carry = ""
        if "\r" in piece:
            if piece.endswith("\r"):
                # Its "\n" may come in the next chunk: one line end, not two.
                piece, carry = piece[:-1], "\r"
            piece = piece.replace("\r\n", "\n").replace("\r", "\n")
        if "\n\n" not in piece:
            self._rest = piece + carry
            return []
        raws = piece.split("\n\n")
        rest = raws.pop()
        self._rest = rest + carry
        # The common chunk holds only single-line "data: " events: two newlines per
        # event, and every event starts with "data: ". Counted over the whole chunk in
        # C, that takes one slice per event instead of three tests.
        framed = len(piece) - len(rest)
        if (
            piece.startswith("data: ")
            and piece.count("\n", 0, framed) == 2 * len(raws)
            and piece.count("\n\ndata: ", 0, framed) == len(raws) - 1
        ):
            return [("", raw[6:]) for raw in raws]
        out: list[tuple[str, str]] = []
        append = out.append
        for raw in raws:
            if raw[:5] == "data:":
                if "\n" not in raw:
                    append(("", raw[6:] if raw[5:6] == " " else raw[5:]))
                    continue
            elif raw[:7] == "event: ":
                # The named form (the Responses API, Anthropic): "event: NAME" and one
                # "data: " line, cut with one partition instead of line by line.
                head, sep, data = raw.partition("\ndata: ")
                if sep and "\n" not in data and "\n" not in head:
                    append((head[7:], data))
                    continue
            event = _parse_event(raw)
            if event is not None:
                append(event)
        return out

    def close(self) -> list[tuple[str, str]]:
        """The events left when the stream ended: an event the server did not close
        with a blank line still counts (many servers end on one newline)."""
        rest, self._rest = self._rest + self._decode(b"", final=True), ""
        rest = rest.replace("\r\n", "\n").replace("\r", "\n")
        if not rest.strip():
            return []
        event = _parse_event(rest.strip("\n"))
        return [] if event is None else [event]


def _parse_event(raw: str) -> tuple[str, str] | None:
    name = ""
    data: list[str] = []
    for line in raw.split("\n"):
        if not line or line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value
        elif field == "error":
            name = "error"
            data.append(value)
    if not data:
        return None
    return name, "\n".join(data)
