"""Repair JSON whose syntax a model got wrong: the one repair every plugin uses.

Repairs only syntax: trailing commas, single-quoted strings, unquoted keys. It never
closes an unterminated string, brace or bracket: on a truncated payload that would
fabricate a call the model never finished (a half-written file, a delete with half a
filter). Every repair is validated afterwards; anything that is not a strict JSON
object comes back as None, so the caller keeps the raw string and the tool's input
check refuses it (seed 004, RepairLooseJSON).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["parse_arguments", "repair_loose_json"]


_KEY_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$")
_KEY_CHARS = _KEY_START | frozenset("0123456789-")
_SPACE = " \t\r\n"


def repair_loose_json(text: str) -> tuple[dict[str, Any] | None, list[str]]:
    """The repaired object and the repairs applied, or (None, repairs) when the text
    cannot be repaired into a JSON object without inventing content."""
    out: list[str] = []
    repairs: list[str] = []
    depth: list[str] = []
    i, n = 0, len(text)
    previous = ""  # the last significant character written outside strings
    while i < n:
        ch = text[i]
        if ch == '"' or ch == "'":
            quote = ch
            j = i + 1
            piece = ['"']
            while j < n and text[j] != quote:
                c = text[j]
                if c == "\\" and j + 1 < n:
                    if quote == "'" and text[j + 1] == "'":
                        piece.append("'")
                    else:
                        piece.append(text[j : j + 2])
                    j += 2
                    continue
                if c == "\\":
                    j += 1
                    break
                piece.append('\\"' if (c == '"' and quote == "'") else c)
                j += 1
            if j >= n:
                return None, [*repairs, "unterminated string (truncated; not repaired)"]
            if quote == "'":
                repairs.append("single-quoted string")
            piece.append('"')
            out.append("".join(piece))
            previous = '"'
            i = j + 1
            continue
        if ch in "{[":
            depth.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not depth or depth.pop() != ch:
                return None, [*repairs, f"unbalanced {ch!r}"]
        elif ch == ",":
            j = i + 1
            while j < n and text[j] in _SPACE:
                j += 1
            if j < n and text[j] in "}]":
                repairs.append("trailing comma")
                i += 1
                continue
        elif ch in _KEY_START and previous in ("{", ","):
            j = i
            while j < n and text[j] in _KEY_CHARS:
                j += 1
            k = j
            while k < n and text[k] in _SPACE:
                k += 1
            if k < n and text[k] == ":":
                out.append(json.dumps(text[i:j]))
                repairs.append("unquoted key")
                previous = '"'
                i = j
                continue
        out.append(ch)
        if ch not in _SPACE:
            previous = ch
        i += 1
    if depth:
        return None, [*repairs, "unclosed brace or bracket (truncated; not repaired)"]
    try:
        value = json.loads("".join(out))
    except ValueError:
        return None, repairs
    return (value if isinstance(value, dict) else None), repairs


def parse_arguments(raw: str) -> tuple[dict[str, Any] | str, list[str]]:
    """Arguments as sent -> a dict (strict, else repaired) or the raw string."""
    stripped = raw.strip()
    if not stripped:
        return {}, []
    try:
        value = json.loads(stripped)
    except ValueError:
        repaired, repairs = repair_loose_json(stripped)
        return (raw, repairs) if repaired is None else (repaired, repairs)
    return (value, []) if isinstance(value, dict) else (raw, [])
