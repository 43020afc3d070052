"""RESP2, the Redis wire format, for :mod:`modelplug_redis.script_link`: a command
packed as an array of bulk strings, and replies read from bytes as they arrive.

No I/O here: :func:`pack` makes the bytes of one command, :class:`Replies` takes the
bytes a connection received and gives back every reply they complete, in order. An
error reply (``-NOSCRIPT ...``) is a :class:`ReplyError` value in that list, not a
raised exception: the caller hands it to the command it answers. Bytes that are not
RESP raise :class:`ProtocolError` and nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["MAX_DEPTH", "ProtocolError", "Replies", "ReplyError", "pack"]

MAX_DEPTH = 32  # nested arrays deeper than this are not an answer any script gives


class ProtocolError(Exception):
    """The bytes from the server are not RESP."""


class ReplyError(Exception):
    """An error reply from the server (``-ERR ...``, ``-NOSCRIPT ...``)."""

    @property
    def code(self) -> str:
        """The first word of the error (``NOSCRIPT``, ``ERR``, ``WRONGPASS``)."""
        return str(self).split(" ", 1)[0]


def pack(args: Sequence[str | bytes | int | float]) -> bytes:
    """One command (``["EVALSHA", sha, 2, ...]``) as the bytes Redis reads."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, bytes):
            data = arg
        elif isinstance(arg, str):
            data = arg.encode()
        elif isinstance(arg, bool):
            raise TypeError("a bool is not a Redis argument: send 0 or 1")
        else:
            data = repr(arg).encode() if isinstance(arg, float) else b"%d" % arg
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


class _Incomplete(Exception):
    """Not all of this reply has arrived yet."""


class Replies:
    """Reads replies out of the bytes a connection receives, across any split."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        """The replies ``data`` completes (with what came before it), in order."""
        buffer = self._buffer
        buffer += data
        replies: list[Any] = []
        start = 0
        try:
            while start < len(buffer):
                value, start_after = _reply(buffer, start, 0)
                replies.append(value)
                start = start_after
        except _Incomplete:
            pass
        del buffer[:start]
        return replies


def _line(buffer: bytearray, start: int) -> tuple[bytes, int]:
    end = buffer.find(b"\r\n", start)
    if end < 0:
        raise _Incomplete
    return bytes(buffer[start:end]), end + 2


def _number(text: bytes) -> int:
    try:
        return int(text)
    except ValueError:
        raise ProtocolError(f"not a number in a reply: {text[:40]!r}") from None


def _reply(buffer: bytearray, start: int, depth: int) -> tuple[Any, int]:
    if depth > MAX_DEPTH:
        raise ProtocolError(f"a reply nested deeper than {MAX_DEPTH} arrays")
    kind = buffer[start : start + 1]
    line, after = _line(buffer, start + 1)
    if kind == b":":
        return _number(line), after
    if kind == b"$":
        size = _number(line)
        if size < 0:
            return None, after
        if len(buffer) < after + size + 2:
            raise _Incomplete
        if buffer[after + size : after + size + 2] != b"\r\n":
            raise ProtocolError("a bulk string without its CRLF")
        return bytes(buffer[after : after + size]), after + size + 2
    if kind == b"*":
        count = _number(line)
        if count < 0:
            return None, after
        items = []
        for _ in range(count):
            item, after = _reply(buffer, after, depth + 1)
            items.append(item)
        return items, after
    if kind == b"+":
        return line, after
    if kind == b"-":
        return ReplyError(line.decode("utf-8", "replace")), after
    raise ProtocolError(f"not a RESP reply: starts with {bytes(kind)!r}")
