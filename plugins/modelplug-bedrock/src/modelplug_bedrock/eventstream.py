"""The ``application/vnd.amazon.eventstream`` framing, decoded incrementally.

A message is a prelude (total length u32, headers length u32, CRC32 of those eight
bytes), the headers, the payload and a CRC32 of everything before it. Bytes arrive in
whatever chunks the network gives; a frame is cut out once it is whole, and the buffer
is compacted only when more than half of it is consumed, so every byte is copied a
bounded number of times (linear in the stream's length, however the frames fall).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Any

__all__ = ["Frame", "FrameDecoder", "FramingError", "encode_frame"]

PRELUDE = 12
CRC = 4
# AWS caps a message at 16 MiB and its headers at 128 KiB; a larger length is a
# corrupt prelude, not a frame worth waiting for.
MAX_MESSAGE = 16 * 1024 * 1024
MAX_HEADERS = 128 * 1024
_PRELUDE = struct.Struct(">III")
_U16 = struct.Struct(">H")
# Header value types: the fixed width of each, or None when a u16 length precedes it.
_FIXED = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}
_SIGNED = {2: ">b", 3: ">h", 4: ">i", 5: ">q", 8: ">q"}


class FramingError(ValueError):
    """The bytes are not a well-formed event stream (a bad CRC, an impossible length);
    the reader turns it into the plugin's classified error."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One message: its headers (``:message-type``, ``:event-type``, ...) and payload."""

    headers: dict[str, Any]
    payload: bytes


class FrameDecoder:
    """Feed chunks, get the whole frames they complete; ``pending`` says whether a
    frame has begun and not ended (a cut stream). A malformed frame after whole ones in
    the same chunk: those are returned and the error kept in ``broken`` (raised by the
    next feed), so what the model sent before it is never lost."""

    __slots__ = ("_buf", "_pos", "broken")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._pos = 0
        self.broken: FramingError | None = None

    @property
    def pending(self) -> int:
        """Bytes received that belong to no whole frame yet."""
        return len(self._buf) - self._pos

    def feed(self, chunk: bytes) -> list[Frame]:
        if self.broken is not None:
            raise self.broken
        buf = self._buf
        pos = self._pos
        if pos and pos * 2 >= len(buf):
            del buf[:pos]  # amortised: at most as many bytes as were consumed
            pos = 0
        buf += chunk
        end = len(buf)
        frames: list[Frame] = []
        view = memoryview(buf)
        try:
            while end - pos >= PRELUDE:
                total, header_len, prelude_crc = _PRELUDE.unpack_from(buf, pos)
                if zlib.crc32(view[pos : pos + 8]) != prelude_crc:
                    raise FramingError("the prelude's CRC does not match")
                if (
                    total > MAX_MESSAGE
                    or header_len > MAX_HEADERS
                    or total < PRELUDE + header_len + CRC
                ):
                    raise FramingError(f"impossible lengths (total {total}, headers {header_len})")
                if end - pos < total:
                    break
                body_end = pos + total - CRC
                (message_crc,) = struct.unpack_from(">I", buf, body_end)
                if zlib.crc32(view[pos:body_end]) != message_crc:
                    raise FramingError("the message's CRC does not match")
                start = pos + PRELUDE
                headers = _headers(view, start, start + header_len)
                frames.append(Frame(headers, bytes(view[start + header_len : body_end])))
                pos += total
        except FramingError as exc:
            if not frames:
                raise
            self.broken = exc
        finally:
            view.release()
        self._pos = pos
        return frames


def _headers(view: memoryview, at: int, end: int) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    try:
        while at < end:
            size = view[at]
            name = bytes(view[at + 1 : at + 1 + size]).decode("utf-8")
            at += 1 + size
            kind = view[at]
            at += 1
            value: Any
            if kind == 7 or kind == 6:
                (length,) = _U16.unpack_from(view, at)
                raw = bytes(view[at + 2 : at + 2 + length])
                value = raw.decode("utf-8") if kind == 7 else raw
                at += 2 + length
            elif kind in _FIXED:
                width = _FIXED[kind]
                if kind == 0 or kind == 1:
                    value = kind == 0
                elif kind == 9:
                    value = bytes(view[at : at + 16])
                else:
                    (value,) = struct.unpack_from(_SIGNED[kind], view, at)
                at += width
            else:
                raise FramingError(f"unknown header value type {kind}")
            headers[name] = value
    except (IndexError, struct.error, UnicodeDecodeError):
        raise FramingError("the headers run past their length") from None
    if at != end:
        raise FramingError("the headers run past their length")
    return headers


def encode_frame(headers: dict[str, str], payload: bytes) -> bytes:
    """A message with string headers (for tests and benchmarks: the wire is read-only)."""
    head = bytearray()
    for name, value in headers.items():
        key, val = name.encode(), value.encode()
        head += bytes([len(key)]) + key + b"\x07" + _U16.pack(len(val)) + val
    total = PRELUDE + len(head) + len(payload) + CRC
    prelude = struct.pack(">II", total, len(head))
    frame = prelude + struct.pack(">I", zlib.crc32(prelude)) + bytes(head) + payload
    return frame + struct.pack(">I", zlib.crc32(frame))
