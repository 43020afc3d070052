"""A TextDelta without pydantic validation, for the stream's hot path.

Validating ``TextDelta(text=...)`` costs about as much as the ``json.loads`` of the
event it came from; the text here is always a ``str`` straight out of that parse, so
there is nothing to validate. The object built is equal to a validated one (same field
values, same fields-set), which the tests check.
"""

from __future__ import annotations

from modelplug.types import TextDelta

__all__ = ["text_delta"]

_new = object.__new__
_set = object.__setattr__


def text_delta(text: str) -> TextDelta:
    """``TextDelta(text=text)`` for a ``text`` known to be a str."""
    delta: TextDelta = _new(TextDelta)
    _set(delta, "__dict__", {"type": "text_delta", "text": text})
    _set(delta, "__pydantic_fields_set__", {"text"})
    _set(delta, "__pydantic_extra__", None)
    _set(delta, "__pydantic_private__", None)
    return delta
