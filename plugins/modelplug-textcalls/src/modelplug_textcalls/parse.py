"""The hook's body: pick the reader for a mode, resume it from ``state``, answer.

The caller (core's HeldText) passes the same growing string on every delta and one
``state`` dict for the whole reply. The reader lives in that dict under
:data:`STATE_KEY`. It keeps positions, never the text: holding a reference to the
reply would stop CPython from growing the caller's string in place, and every delta
would copy the whole reply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from modelplug import ParsedText, TextCallError

from .readers import Reader, make_reader

__all__ = ["MODES", "STATE_KEY", "parse_text_tool_calls", "read_text_calls"]

MODES = frozenset(("whole", "lines", "off", "heredoc"))
STATE_KEY = "modelplug_textcalls"

# How much of the reply's start and of the last-read end are kept to notice that a
# state dict is being reused for a different text.
_CHECK = 32


class _Resumable:
    """A reader plus what it needs to tell that ``text`` still extends what it read."""

    __slots__ = ("head", "mode", "names", "reader", "seen", "tail", "tools")

    def __init__(self, mode: str, tools: Sequence[Any], names: frozenset[str]) -> None:
        self.mode = mode
        self.tools = tools  # HeldText passes the same list on every delta
        self.names = names
        self.reader: Reader = make_reader(mode, names)
        self.seen = 0
        self.head = ""
        self.tail = ""

    def continues(self, text: str, mode: str, tools: Sequence[Any]) -> bool:
        return (
            self.mode == mode
            and (self.tools is tools or self.names == _tool_names(tools))
            and len(text) >= self.seen
            and text.startswith(self.head)
            and text.startswith(self.tail, self.seen - len(self.tail))
        )

    def mark(self, text: str) -> None:
        self.seen = len(text)
        if len(self.head) < _CHECK:
            self.head = text[:_CHECK]
        self.tail = text[max(0, self.seen - _CHECK) : self.seen]


def _tool_names(tools: Sequence[Any]) -> frozenset[str]:
    if tools is None:
        return frozenset()
    if not isinstance(tools, list | tuple):
        raise TextCallError(f"tools must be a list of ToolSpec, not {type(tools).__name__}")
    names: list[str] = []
    for tool in tools:
        name = tool.get("name") if isinstance(tool, Mapping) else getattr(tool, "name", None)
        if not isinstance(name, str) or not name:
            raise TextCallError(f"every tool needs a name; got {type(tool).__name__}")
        names.append(name)
    return frozenset(names)


def read_text_calls(
    text: str,
    tools: Sequence[Any],
    mode: str | None,
    final: bool,
    state: dict[str, Any] | None,
) -> ParsedText | None:
    """Read the reply under ``mode``; None for a mode this plugin does not know.

    :raises TextCallError: ``text``, ``tools`` or ``state`` is not what the hook's
        contract says.
    """
    mode = mode or "whole"
    if mode not in MODES:
        return None  # another reader may know this dialect
    if not isinstance(text, str):
        raise TextCallError(f"text must be a string, not {type(text).__name__}")
    if state is not None and not isinstance(state, dict):
        raise TextCallError(f"state must be a dict or None, not {type(state).__name__}")
    entry = state.get(STATE_KEY) if state is not None else None
    if not isinstance(entry, _Resumable) or not entry.continues(text, mode, tools):
        names = _tool_names(tools)
        if mode == "off" or not names:
            if state is not None:
                state.pop(STATE_KEY, None)
            return ParsedText(text=text)
        entry = _Resumable(mode, tools, names)
        if state is not None:
            state[STATE_KEY] = entry
    entry.reader.advance(text, final)
    if not final:
        entry.mark(text)
        return ParsedText(text=text, hold_from=entry.reader.hold_from())
    if state is not None:
        state.pop(STATE_KEY, None)  # the reply is over; a new one starts afresh
    return entry.reader.result(text)


def parse_text_tool_calls(
    text: str,
    tools: Sequence[Any],
    mode: str | None,
    final: bool,
    state: dict[str, Any] | None,
) -> ParsedText | None:
    """:func:`read_text_calls`, with any failure turned into a typed error."""
    try:
        return read_text_calls(text, tools, mode, final, state)
    except TextCallError:
        raise
    except Exception as exc:
        # A bug here must not surface as a bare KeyError in an adapter's stream, nor
        # leave a half-advanced reader behind for the next delta.
        if isinstance(state, dict):
            state.pop(STATE_KEY, None)
        raise TextCallError(
            f"the text-tool-call reader failed on this reply ({type(exc).__name__}: {exc}); "
            "please report it with the reply text"
        ) from exc
