"""The heredoc reader's errors: typed, so a caller can tell a cut-off call from a wrong one."""

from __future__ import annotations

from modelplug import TextCallError

__all__ = ["HeredocError", "HeredocSyntaxError", "HeredocTruncatedError", "is_truncation_error"]


class HeredocError(TextCallError):
    """A ``@@call`` block or a json-loose-heredoc value could not be read."""


class HeredocSyntaxError(HeredocError):
    """The text is wrong: the reader met a character it cannot accept."""


class HeredocTruncatedError(HeredocError):
    """The text stopped early: an object, string or body was never closed.

    Never repaired by closing it: a cut-off call is how a half-written file or a delete
    with half a filter would reach a tool looking complete.
    """


def is_truncation_error(error: BaseException) -> bool:
    """True when ``error`` means "the input stopped early", not "the input is wrong"."""
    return isinstance(error, HeredocTruncatedError)
