"""A model whose /api/show lacks the "tools" capability (or whose route says
supports_tools = false) gets core's notice, and then what the notice says happens: its
tools are not sent (a real Ollama answers such a request 400, see
recorded/no_tools_error.json) and no call is read from its text, unless the user's
settings name a text_tool_calls mode."""

from __future__ import annotations

import json
from typing import Any

from modelplug import hookimpl
from modelplug.contract.types import Notice, ParsedText, ToolSpec, ToolUseBlock

TOOLS = [ToolSpec(name="get_weather")]
CALL_TEXT = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


class WholeReader:
    """Mode 'whole': the reply is one JSON call {"name", "arguments"} or plain text."""

    @hookimpl
    def modelplug_parse_text_tool_calls(
        self, text: str, tools: list[ToolSpec], mode: str, final: bool, state: Any
    ) -> ParsedText | None:
        if mode != "whole":
            return None
        if not final:
            return ParsedText(text=text, hold_from=0)  # held until the reply is whole
        try:
            obj = json.loads(text)
        except ValueError:
            return ParsedText(text=text)
        if not isinstance(obj, dict) or obj.get("name") not in {t.name for t in tools}:
            return ParsedText(text=text)
        return ParsedText(text="", calls=[ToolUseBlock(name=obj["name"], input=obj["arguments"])])


def reply(text: str) -> list[dict[str, Any]]:
    """An /api/chat stream of ``text`` from gemma4, as Ollama streams a reply."""
    return [
        {"model": "gemma4", "message": {"role": "assistant", "content": text}, "done": False},
        {
            "model": "gemma4",
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": 12,
            "eval_count": 9,
        },
    ]


def call(client: Any) -> tuple[Any, list[Notice]]:
    notices: list[Notice] = []
    response = client.complete("ollama/gemma4", "weather?", tools=TOOLS, on_event=notices.append)
    return response, [n for n in notices if isinstance(n, Notice) and n.kind == "tools_unsupported"]


def test_api_show_without_tools_gives_the_notice_and_sends_no_tools(ollama, wire):
    wire.answer("show_gemma4.json", "/api/show")
    wire.lines(reply("I cannot look up the weather."))
    response, notices = call(ollama(probe=True))

    (notice,) = notices
    assert notice.message.startswith("ollama/gemma4 cannot call tools (Ollama lists its")
    assert "completion, vision (from /api/show)" in notice.message
    assert "left out of the request" in notice.message
    assert [r.path for r in wire.requests] == ["/api/show", "/api/chat"]
    assert "tools" not in wire.requests[1].json()
    assert response.text == "I cannot look up the weather."
    assert response.stop_reason == "end_turn"


def test_a_call_written_as_text_is_not_read_when_the_notice_said_none_will_come(ollama, wire):
    wire.answer("show_gemma4.json", "/api/show")
    wire.lines(reply(CALL_TEXT))
    response, notices = call(ollama(None, WholeReader(), probe=True))
    assert len(notices) == 1
    assert "tools" not in wire.requests[1].json()
    assert response.tool_calls == []
    assert response.text == CALL_TEXT


def test_after_an_explicit_probe_core_s_notice_stands_and_no_tools_are_sent(ollama, wire):
    wire.answer("show_gemma4.json", "/api/show")
    wire.server.add_json({"models": []}, path="/api/ps")
    wire.lines(reply("No tools here."))
    client = ollama()  # no automatic /api/show
    client.probe("ollama/gemma4")
    response, notices = call(client)
    # Core said it, from the probe: the plugin does not say it again.
    assert len(notices) == 1 and "a probe of the server said so" in notices[0].message
    assert [r.path for r in wire.requests] == ["/api/show", "/api/ps", "/api/chat"]
    assert "tools" not in wire.requests[2].json()
    assert response.text == "No tools here."


def test_supports_tools_false_in_the_settings_sends_no_tools(ollama, wire):
    wire.lines(reply("Plain text."))
    settings = {"models": {"ollama/gemma4": {"supports_tools": False}}}
    response, notices = call(ollama(settings))
    assert len(notices) == 1 and "supports_tools = false" in notices[0].message
    assert "tools" not in wire.requests[0].json()
    assert response.text == "Plain text."


def test_a_text_tool_calls_mode_in_the_settings_reads_calls_from_the_text(ollama, wire):
    # The user asked for calls written as text: no notice (the tools are the prompt's
    # business), nothing sent that Ollama would refuse, and the call is read.
    wire.answer("show_gemma4.json", "/api/show")
    wire.lines(reply(CALL_TEXT))
    settings = {"models": {"ollama/gemma4": {"text_tool_calls": "whole"}}}
    response, notices = call(ollama(settings, WholeReader(), probe=True))
    assert notices == []
    assert "tools" not in wire.requests[1].json()
    (tool_call,) = response.tool_calls
    assert (tool_call.name, tool_call.input) == ("get_weather", {"city": "Paris"})
