"""The model a caller names is a modelplug spec, alias or role, and is checked as one
before anything else reads it: printable, no white space, at most :data:`MAX_MODEL`
characters. So a model field holding line breaks, header-like text, NUL or a megabyte
of text is a 400 naming the field, and never reaches a resolve, an upstream request,
a response header (``x-modelplug-route``), a metric or a log line."""

from __future__ import annotations

from .shapes.base import ShapeError

__all__ = ["MAX_MODEL", "check_model"]

MAX_MODEL = 256  # characters: longer than any provider's model id with its provider


def check_model(model: str) -> str:
    """``model`` when it can be a spec, alias or role; else :class:`ShapeError` (400).

    The message does not repeat the value (it may be anything a caller sent)."""
    if len(model) > MAX_MODEL:
        raise ShapeError(
            f"model: at most {MAX_MODEL} characters (got {len(model)}); name a modelplug "
            "spec, alias or role, e.g. anthropic/claude-sonnet-4-6",
            param="model",
        )
    # isprintable() is False for control characters (CR, LF, NUL, ESC) and for every
    # separator but the ASCII space, which split() catches with the other white space
    # (and an empty name).
    if not model.isprintable() or model.split() != [model]:
        raise ShapeError(
            "model: a spec, alias or role is printable text without spaces or line "
            "breaks, e.g. anthropic/claude-sonnet-4-6",
            param="model",
        )
    return model
