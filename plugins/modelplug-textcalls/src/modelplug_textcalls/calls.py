"""What counts as a tool call once a piece of text has been read as JSON.

A call is an object with exactly two keys: ``name`` (a tool of this request) and one of
``arguments`` or ``parameters`` (a JSON object). An array of such objects is several
calls. Anything else is not a call, and :class:`NotACall` says why.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NoReturn

from .scan import WHITESPACE, Call, skip_blanks

__all__ = [
    "ARGUMENT_KEYS",
    "CALL_KEYS",
    "MAX_DEPTH",
    "Call",
    "NotACall",
    "calls_in",
    "decode_json",
    "decode_json_values",
]

ARGUMENT_KEYS = ("arguments", "parameters")
CALL_KEYS = ("name", *ARGUMENT_KEYS)

# Deeper nesting is refused before the decoder sees it: Python's json module recurses
# and would raise RecursionError on a few thousand brackets.
MAX_DEPTH = 200


class NotACall(Exception):
    """A piece of text that looked like a call is not one; the message says why."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # A duplicated key would make json keep the last value silently; a call whose
    # arguments say two things is not read at all.
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"duplicate key {key!r}")
        obj[key] = value
    return obj


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs, parse_constant=_no_constant)


def decode_json(text: str) -> Any:
    """One strict JSON value (NaN, Infinity and duplicate keys refused)."""
    values = decode_json_values(text)
    if len(values) != 1:
        raise NotACall(f"expected one JSON value, found {len(values)}")
    return values[0]


def _too_deep(text: str) -> bool:
    """Whether brackets outside strings nest deeper than MAX_DEPTH. Checked here, not
    left to RecursionError: the interpreter's recursion limit is the host program's
    setting (mypy, for one, raises it to 16,384), and a limit that moves is no limit."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif char in "]}":
            depth -= 1
    return False


def decode_json_values(text: str) -> list[Any]:
    """Whitespace-separated strict JSON values (at least one)."""
    if _too_deep(text):
        raise NotACall(f"nested deeper than {MAX_DEPTH} levels")
    values: list[Any] = []
    end = len(text)
    i = skip_blanks(text, 0, WHITESPACE)
    try:
        while i < end:
            value, i = _DECODER.raw_decode(text, i)
            values.append(value)
            i = skip_blanks(text, i, WHITESPACE)
    except (ValueError, RecursionError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise NotACall(f"not valid JSON ({reason or type(exc).__name__})") from None
    if not values:
        raise NotACall("holds no JSON")
    return values


def names_hint(names: Sequence[str]) -> str:
    shown = ", ".join(sorted(names)[:10])
    more = "" if len(names) <= 10 else f" and {len(names) - 10} more"
    return f"this request's tools are {shown}{more}"


def _one_call(obj: Any, names: frozenset[str]) -> Call:
    if not isinstance(obj, dict):
        raise NotACall(f"a call must be a JSON object, not {_kind(obj)}")
    present = [key for key in ARGUMENT_KEYS if key in obj]
    if "name" not in obj:
        raise NotACall('a call needs a "name"')
    if len(present) != 1:
        raise NotACall('a call needs exactly one of "arguments" or "parameters"')
    extra = sorted(set(obj) - {"name", present[0]})
    if extra:
        raise NotACall(f"a call has only name and arguments; unexpected key {extra[0]!r}")
    name = obj["name"]
    if not isinstance(name, str):
        raise NotACall(f"a call's name must be a string, not {_kind(name)}")
    if name not in names:
        raise NotACall(f"unknown tool {name!r}; {names_hint(tuple(names))}")
    arguments = obj[present[0]]
    if not isinstance(arguments, dict):
        raise NotACall(f"the arguments of {name!r} must be a JSON object, not {_kind(arguments)}")
    return name, arguments


def calls_in(values: Sequence[Any], names: frozenset[str]) -> list[Call]:
    """The calls in JSON values: each value is a call object or a non-empty array of them."""
    calls: list[Call] = []
    for value in values:
        if isinstance(value, list):
            if not value:
                raise NotACall("an empty array holds no calls")
            calls.extend(_one_call(item, names) for item in value)
        else:
            calls.append(_one_call(value, names))
    return calls


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"
