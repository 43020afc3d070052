"""Tool calls a small model writes as text go through core's HeldText and the
modelplug_parse_text_tool_calls hook, as in openai-compat; a small reader of our own
stands in for modelplug-textcalls."""

from __future__ import annotations

import json
from typing import Any

from modelplug import hookimpl
from modelplug.contract.types import ParsedText, TextDelta, ToolCallStart, ToolSpec, ToolUseBlock

CALL_TEXT = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
TOOLS = [ToolSpec(name="get_weather")]


class WholeReader:
    """Mode 'whole': the reply is one JSON call {"name", "arguments"} or plain text."""

    @hookimpl
    def modelplug_parse_text_tool_calls(
        self, text: str, tools: list[ToolSpec], mode: str, final: bool, state: Any
    ) -> ParsedText | None:
        if mode != "whole":
            return None
        if not final:
            return ParsedText(text=text, hold_from=0 if text.lstrip()[:1] in ("{", "") else None)
        try:
            obj = json.loads(text)
        except ValueError:
            return ParsedText(text=text)
        if not isinstance(obj, dict) or obj.get("name") not in {t.name for t in tools}:
            return ParsedText(text=text)
        return ParsedText(text="", calls=[ToolUseBlock(name=obj["name"], input=obj["arguments"])])


def text_lines(text: str, reason: str = "stop") -> list[dict[str, Any]]:
    parts = [text[i : i + 7] for i in range(0, len(text), 7)]
    lines: list[dict[str, Any]] = [
        {"model": "qwen2.5-coder:7b", "message": {"role": "assistant", "content": p}, "done": False}
        for p in parts
    ]
    lines.append(
        {
            "model": "qwen2.5-coder:7b",
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": reason,
            "prompt_eval_count": 30,
            "eval_count": 14,
        }
    )
    return lines


def test_a_call_written_as_text_is_held_and_becomes_a_tool_use(ollama, wire):
    wire.lines(text_lines(CALL_TEXT))
    events = list(
        ollama(None, WholeReader()).stream("ollama/qwen2.5-coder:7b", "weather?", tools=TOOLS)
    )
    assert [e for e in events if isinstance(e, TextDelta)] == []  # never shown
    response = events[-1].response
    assert response.stop_reason == "tool_use"
    assert [(c.name, c.input) for c in response.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert response.text == ""
    assert response.metadata["tool_calls_from_text"] is True


def test_prose_is_shown_when_it_turns_out_not_to_be_a_call(ollama, wire):
    wire.lines(text_lines("It is sunny in Paris."))
    events = list(
        ollama(None, WholeReader()).stream("ollama/qwen2.5-coder:7b", "weather?", tools=TOOLS)
    )
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "It is sunny in Paris."
    response = events[-1].response
    assert response.stop_reason == "end_turn"
    assert response.tool_calls == []


def test_a_reply_cut_at_length_is_never_read_as_a_call(ollama, wire):
    wire.lines(text_lines(CALL_TEXT, reason="length"))
    events = list(
        ollama(None, WholeReader()).stream("ollama/qwen2.5-coder:7b", "weather?", tools=TOOLS)
    )
    response = events[-1].response
    assert response.stop_reason == "max_tokens"
    assert response.tool_calls == []
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == CALL_TEXT


def test_real_calls_release_the_held_text(ollama, wire):
    wire.chat("tool_call.jsonl")
    events = list(ollama(None, WholeReader()).stream("ollama/llama3.2", "weather?", tools=TOOLS))
    assert [e.name for e in events if isinstance(e, ToolCallStart)] == ["get_weather"]
    assert "tool_calls_from_text" not in events[-1].response.metadata


def test_mode_off_in_settings_never_holds_text(ollama, wire):
    wire.lines(text_lines(CALL_TEXT))
    extra = {"models": {"ollama/qwen2.5-coder:7b": {"text_tool_calls": "off"}}}
    events = list(ollama(extra, WholeReader()).stream("ollama/qwen2.5-coder:7b", "w?", tools=TOOLS))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == CALL_TEXT
    assert events[-1].response.tool_calls == []
