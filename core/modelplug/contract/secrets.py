"""Keep secrets out of every message modelplug produces.

Whenever modelplug reads a key (from the environment or the credentials file) or a
header value from the user's settings, it registers the value here; every exception
message, Notice and log line passes through :func:`redact`. The set is process-wide
because a key read by one client may surface in an error raised through another.

What is masked, as ``***``:

- every registered secret, wherever it appears;
- the token of a value with a scheme (``Bearer <token>``, ``Basic <token>``), on its own;
- any run of :data:`MIN_FRAGMENT` or more consecutive characters of a registered
  secret: a server that echoes all of a key but one character, or its first or last
  dozen characters, shows none of them;
- the same in text that writes a key with JSON escapes (``\\u002d``, ``\\/``).

Log records of every logger pass through the record factory installed here (the
loggers of httpx2, httpcore2, the vendor SDKs and asyncio log headers, bodies and
tracebacks at DEBUG), tracebacks included. :func:`clean_exception` gives errors whose
chained causes hold nothing raw.
"""

from __future__ import annotations

import logging
import re
import threading
import traceback
from typing import Any

__all__ = [
    "MIN_FRAGMENT",
    "clean_exception",
    "redact",
    "redact_data",
    "register_secret",
]

_MIN_SECRET_LENGTH = 6
# Runs of this many characters of a secret are masked. Found through the secrets'
# 8-character pieces looked up at every 3rd position of a text: any run of 10 holds a
# piece starting at such a position, so a text of n characters costs n/3 lookups.
MIN_FRAGMENT = 10
_PIECE = 8
_STEP = MIN_FRAGMENT - _PIECE + 1
MASK = "***"
# "Bearer abc", "Basic abc", "token abc": a scheme word, then the secret part.
_SCHEME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_-]{0,30})\s+(\S.*?)\s*$", re.DOTALL)
# JSON escapes a server may write a key's characters with (\u002d is "-", \/ is "/").
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\/")

_lock = threading.Lock()
_secrets: frozenset[str] = frozenset()
# Every piece of every long secret -> (secret, offset of the piece in it).
_pieces: dict[str, list[tuple[str, int]]] = {}
_by_length: tuple[str, ...] = ()


def register_secret(value: str | None) -> None:
    """Remember a secret so it is masked wherever it would appear.

    A value with a scheme (``Bearer <token>``) registers its token too, so a server that
    echoes the token alone is masked as well.
    """
    if not value or not isinstance(value, str):
        return
    found = _SCHEME.match(value)
    if found is not None:
        _register_one(found.group(2), fragments=True)
    # The whole of a scheme value is masked where it appears whole; its runs are the
    # token's (a run of "Bearer <token>" would mask "Bearer tok" in any text).
    _register_one(value.strip(), fragments=found is None)


def _register_one(value: str, *, fragments: bool) -> None:
    global _secrets, _pieces, _by_length
    if len(value) < _MIN_SECRET_LENGTH or value in _secrets:
        return
    with _lock:
        if value in _secrets:
            return
        pieces = {k: list(v) for k, v in _pieces.items()}
        if fragments and len(value) >= MIN_FRAGMENT:
            for offset in range(len(value) - _PIECE + 1):
                pieces.setdefault(value[offset : offset + _PIECE], []).append((value, offset))
        secrets = _secrets | {value}
        _pieces = pieces
        _by_length = tuple(sorted(secrets, key=len, reverse=True))
        _secrets = secrets


def redact(text: str) -> str:
    """``text`` with every registered secret, and every long run of one, as ``***``."""
    if not _secrets or not text:
        return text
    cleaned = _redact_plain(text)
    if "\\" in cleaned:
        # A key written with JSON escapes: look again with them decoded. The decoded
        # form is kept only when it held something to mask.
        decoded = _decode_escapes(cleaned)
        if decoded != cleaned:
            masked = _redact_plain(decoded)
            if masked != decoded:
                return masked
    return cleaned


def _redact_plain(text: str) -> str:
    for secret in _by_length:
        if secret in text:
            text = text.replace(secret, MASK)
    if not _pieces or len(text) < MIN_FRAGMENT:
        return text
    spans = _fragment_spans(text)
    if not spans:
        return text
    out: list[str] = []
    last = 0
    for start, end in spans:
        out.append(text[last:start])
        out.append(MASK)
        last = end
    out.append(text[last:])
    return "".join(out)


def _fragment_spans(text: str) -> list[tuple[int, int]]:
    """The merged spans of ``text`` that are runs of MIN_FRAGMENT or more characters of
    a registered secret."""
    pieces = _pieces
    spans: list[tuple[int, int]] = []
    size = len(text)
    for position in range(0, size - _PIECE + 1, _STEP):
        hits = pieces.get(text[position : position + _PIECE])
        if hits is None:
            continue
        for secret, offset in hits:
            start, at = position, offset
            while start > 0 and at > 0 and text[start - 1] == secret[at - 1]:
                start -= 1
                at -= 1
            end = position + _PIECE
            at = offset + _PIECE
            while end < size and at < len(secret) and text[end] == secret[at]:
                end += 1
                at += 1
            if end - start >= MIN_FRAGMENT:
                spans.append((start, end))
    if not spans:
        return spans
    spans.sort()
    merged = [spans[0]]
    for start, end in spans[1:]:
        if start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _decode_escapes(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code is None:
            return "/"
        char = chr(int(code, 16))
        # Only characters a key is made of; quotes, backslashes and controls stay
        # escaped so the text keeps its shape.
        return char if char.isprintable() and char not in '"\\' and char != " " else match[0]

    return _ESCAPE.sub(one, text)


def redact_data(value: Any) -> Any:
    """``value`` (JSON-like data: dicts, lists, tuples, strings) with every string
    redacted, keys included; the same object when nothing needed masking."""
    if not _secrets:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        changed = False
        out: dict[Any, Any] = {}
        for key, item in value.items():
            new_key = redact_data(key)
            new_item = redact_data(item)
            changed = changed or new_key is not key or new_item is not item
            out[new_key] = new_item
        return out if changed else value
    if isinstance(value, list | tuple):
        items = [redact_data(item) for item in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)(items) if isinstance(value, tuple) else items
    if isinstance(value, bytes | bytearray):
        text = bytes(value).decode("utf-8", "replace")
        cleaned = redact(text)
        return value if cleaned == text else cleaned.encode()
    return value


class RedactedError(Exception):
    """The stand-in for a chained exception whose type cannot be derived from."""


# Attributes a stand-in keeps when they hold a number or a string (redacted): what
# classifiers read. Responses, requests, headers and bodies are left behind.
_KEPT_ATTRIBUTES = ("status_code", "status", "code", "type", "errno", "strerror")
_stand_in_types: dict[type[BaseException], type[BaseException]] = {}


def _stand_in_type(original: type[BaseException]) -> type[BaseException]:
    kind = _stand_in_types.get(original)
    if kind is None:
        namespace = {
            "_modelplug_redacted": True,
            "__str__": lambda self: self._modelplug_text,
            "__repr__": lambda self: f"{original.__name__}({self._modelplug_text!r})",
            "__reduce__": lambda self: (RedactedError, (self._modelplug_text,)),
            "__module__": original.__module__,
            "__qualname__": original.__qualname__,
        }
        try:
            # A subclass of the original, named like it: isinstance checks still hold
            # and a traceback still reads "anthropic.AuthenticationError: ...".
            kind = type(original.__name__, (original,), namespace)
        except TypeError:  # a type that cannot be derived from
            kind = type(original.__name__, (RedactedError,), namespace)
        _stand_in_types[original] = kind
    return kind


def _stand_in(link: BaseException) -> BaseException:
    try:
        text = redact(str(link))
    except Exception:
        text = type(link).__name__
    kind = _stand_in_type(type(link))
    try:
        # Made without the original's __init__, which may want a response or a body.
        stand_in = kind.__new__(kind)
    except Exception:
        kind = type(type(link).__name__, (RedactedError,), dict(vars(kind)))
        stand_in = kind.__new__(kind)
    stand_in.args = (text,)
    stand_in._modelplug_text = text  # type: ignore[attr-defined]
    for name in _KEPT_ATTRIBUTES:
        value = getattr(link, name, None)
        if isinstance(value, int | str) and not isinstance(value, bool):
            try:
                setattr(stand_in, name, redact(value) if isinstance(value, str) else value)
            except (AttributeError, TypeError):
                pass
    return stand_in


def clean_exception(error: BaseException) -> BaseException:
    """``error`` with every exception it chains (``__cause__``, ``__context__``, all the
    way down) as clean as modelplug's own: a chained modelplug error is kept (its
    message is redacted already), any other is replaced by a stand-in: an instance of a
    subclass of its type, with the same name, holding only its redacted message, its
    status or code, and its traceback (no response, request, headers or body).
    Returns ``error``."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        current.__cause__ = _clean_link(current.__cause__)
        current.__context__ = _clean_link(current.__context__)
        current = current.__cause__ or current.__context__
    return error


def _clean_link(link: BaseException | None) -> BaseException | None:
    if link is None or getattr(type(link), "_modelplug_redacted", False):
        return link
    stand_in = _stand_in(link)
    stand_in.__traceback__ = link.__traceback__
    stand_in.__cause__ = link.__cause__
    stand_in.__context__ = link.__context__
    stand_in.__suppress_context__ = link.__suppress_context__
    return stand_in


def _clean_record(record: logging.LogRecord) -> None:
    try:
        message = record.getMessage()
    except Exception:
        return
    cleaned = redact(message)
    if cleaned != message:
        record.msg = cleaned
        record.args = None
    if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
        # Formatted now, redacted, and kept where every Formatter looks first.
        text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        record.exc_text = redact(text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


def _install_record_factory() -> None:
    """Redact every log record, of every logger.

    modelplug drives libraries (httpx2, httpcore2, vendor SDKs, asyncio) that log
    request and response headers, bodies and tracebacks at DEBUG, under their own
    names; a filter on one logger would miss them, and handlers belong to the
    application. Wrapping the record factory covers all of them. Nothing is done while
    no secret is registered.
    """
    previous = logging.getLogRecordFactory()
    if getattr(previous, "_modelplug_redacting", False):
        return

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if _secrets:
            _clean_record(record)
        return record

    factory._modelplug_redacting = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


_install_record_factory()
