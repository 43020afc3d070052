"""modelplug-textcalls: read tool calls that models write as text instead of as tool calls.

Modes: ``whole`` (the default), ``lines``, ``off``, and the opt-in ``heredoc`` dialect
(``@@call <name>`` plus one json-loose-heredoc object). Any other mode is left to
another plugin (the hook returns None). See the README for the accepted forms and the
holding rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from modelplug import hookimpl

if TYPE_CHECKING:
    from modelplug import ParsedText, ToolSpec

__all__ = ["modelplug_parse_text_tool_calls"]


@hookimpl
def modelplug_parse_text_tool_calls(
    text: str,
    tools: list[ToolSpec],
    mode: str,
    final: bool,
    state: dict[str, Any] | None,
) -> ParsedText | None:
    """Read the calls in ``text`` under ``mode``; None when the mode is not ours."""
    from .parse import parse_text_tool_calls

    return parse_text_tool_calls(text, tools, mode, final, state)
