"""Hold back streamed text that may still turn out to be a tool call written as text.

Adapters for servers whose models sometimes write calls as JSON in the message text use
:class:`HeldText`: feed it every text delta, show what :meth:`HeldText.feed` returns, and
call :meth:`HeldText.finish` at the end for the rest of the prose and the calls (or
:meth:`HeldText.release` when the calls came another way and only the held text is due). It calls
the ``modelplug_parse_text_tool_calls`` hook, keeping one state dict for the whole reply
so a reader can resume where it stopped instead of re-reading the text.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Protocol

from modelplug.contract.types import ParsedText, ToolSpec, ToolUseBlock

__all__ = ["HeldText", "TextCallHook"]


class TextCallHook(Protocol):
    """The one hook HeldText calls (the plugin manager's hook relay has it)."""

    def modelplug_parse_text_tool_calls(
        self,
        *,
        text: str,
        tools: list[ToolSpec],
        mode: str,
        final: bool,
        state: dict[str, Any] | None,
    ) -> ParsedText | None:
        """The text tool calls readers find in ``text``; see the hook's spec."""
        ...


class HeldText:
    """One reply's text, with the part that may still become a call held back.

    :param hook: the plugin manager's hook relay (``client.hook``).
    :param tools: the request's tools (no tools: nothing is ever held).
    :param mode: the model's text-tool-call mode (``whole``, ``lines``, ``off``, ...).
    """

    def __init__(self, hook: TextCallHook, tools: list[ToolSpec], mode: str | None) -> None:
        self._hook = hook
        self._tools = tools
        self._mode = mode or "whole"
        self._active = bool(tools) and self._mode != "off"
        self._state: dict[str, Any] = {}
        self._text = ""
        self._shown = 0
        self._gen = self._run()
        next(self._gen)

    def _parse(self, text: str, final: bool) -> ParsedText | None:
        result: ParsedText | None = self._hook.modelplug_parse_text_tool_calls(
            text=text, tools=self._tools, mode=self._mode, final=final, state=self._state
        )
        return result

    def _run(self) -> Generator[str, str, None]:
        # The reply lives in a local variable so that ``text += delta`` can grow the
        # string in place (CPython does so while it holds the only reference); keeping
        # it on ``self`` would copy the whole reply on every delta: quadratic.
        text = ""
        out = ""
        while True:
            delta = yield out
            if delta == "":
                # An empty delta is the signal to publish the whole text (finish()).
                self._text = text
                out = ""
                continue
            text += delta
            length = len(text)
            if not self._active:
                out = delta
                self._shown = length
                continue
            result = self._parse(text, final=False)
            limit = length if result is None or result.hold_from is None else result.hold_from
            del result
            if limit <= self._shown:
                out = ""
            else:
                out = text[self._shown : limit]
                self._shown = limit

    def feed(self, delta: str) -> str:
        """Add a delta; return the text that may be shown now (possibly empty)."""
        if not delta:
            return ""
        return self._gen.send(delta)

    def release(self) -> str:
        """End the reply without reading calls from its text (the server sent real tool
        calls, or cut the reply off): the text still held back, to show now."""
        self._gen.send("")
        text = self._text
        self._gen.close()
        return text[self._shown :]

    def finish(self) -> tuple[str, str, list[ToolUseBlock]]:
        """End the reply. Returns (text still to show, the whole prose, the calls)."""
        self._gen.send("")
        text = self._text
        self._gen.close()
        if not self._active:
            return "", text, []
        result = self._parse(text, final=True)
        if result is None:
            return text[self._shown :], text, []
        prose = result.text
        # What was shown is always a prefix of the prose: only held text can be a call.
        shown = text[: self._shown]
        rest = prose[self._shown :] if prose.startswith(shown) else ""
        return rest, prose, list(result.calls)
