"""Tool calls written as text go through modelplug_parse_text_tool_calls (via core's
HeldText); a small reader of our own stands in for modelplug-textcalls."""

from __future__ import annotations

import json
from typing import Any

import pytest
from modelplug import TruncatedToolCallError, hookimpl
from modelplug.contract.types import Notice, ParsedText, TextDelta, ToolSpec, ToolUseBlock


class WholeReader:
    """Mode 'whole': the reply is one JSON call {"name", "arguments"} or plain text."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, bool]] = []

    @hookimpl
    def modelplug_parse_text_tool_calls(
        self, text: str, tools: list[ToolSpec], mode: str, final: bool, state: Any
    ) -> ParsedText | None:
        self.calls.append((mode, final))
        if mode != "whole":
            return None
        if not final:
            return ParsedText(text=text, hold_from=0 if text.lstrip()[:1] in ("{", "") else None)
        try:
            obj = json.loads(text)
        except ValueError:
            return ParsedText(text=text)
        if obj.get("name") not in {t.name for t in tools}:
            return ParsedText(text=text)
        return ParsedText(
            text="", calls=[ToolUseBlock(name=obj["name"], input=obj.get("arguments", {}))]
        )


CALL_TEXT = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
TOOLS = [ToolSpec(name="get_weather")]


def pieces(text: str, finish: str = "stop") -> list[dict[str, Any]]:
    parts = [text[i : i + 7] for i in range(0, len(text), 7)]
    events = [{"choices": [{"delta": {"content": p}}]} for p in parts]
    events.append({"choices": [{"delta": {}, "finish_reason": finish}]})
    return events


def test_a_call_written_as_text_is_held_and_becomes_a_tool_use(compat, wire_server):
    reader = WholeReader()
    wire_server.add_sse(pieces(CALL_TEXT), done=True)
    events = list(compat(None, reader).stream("wire/m", "weather?", tools=TOOLS))
    assert [e for e in events if isinstance(e, TextDelta)] == []  # never shown
    response = events[-1].response
    assert response.stop_reason == "tool_use"
    assert [(c.name, c.input) for c in response.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert response.text == ""
    assert response.metadata["tool_calls_from_text"] is True
    assert ("whole", True) in reader.calls and ("whole", False) in reader.calls


def test_held_prose_is_shown_at_the_end(compat, wire_server):
    wire_server.add_sse(pieces("{not a call} but prose"), done=True)
    events = list(compat(None, WholeReader()).stream("wire/m", "x", tools=TOOLS))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "{not a call} but prose"
    assert events[-1].response.stop_reason == "end_turn"


def test_no_text_calls_are_read_when_cut_at_length(compat, wire_server):
    reader = WholeReader()
    wire_server.add_sse(pieces(CALL_TEXT, finish="length"), done=True)
    events = list(compat(None, reader).stream("wire/m", "x", tools=TOOLS))
    response = events[-1].response
    assert response.stop_reason == "max_tokens" and response.tool_calls == []
    assert response.text == CALL_TEXT
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == CALL_TEXT
    assert ("whole", True) not in reader.calls


def test_mode_off_never_asks_the_reader(compat, wire_server):
    reader = WholeReader()
    wire_server.add_sse(pieces(CALL_TEXT), done=True)
    client = compat({"models": {"wire/m": {"text_tool_calls": "off"}}}, reader)
    response = client.complete("wire/m", "x", tools=TOOLS)
    assert response.text == CALL_TEXT and reader.calls == []


def test_truncated_real_call_is_reported_not_dispatched(compat, wire_server):
    wire_server.add_sse(
        [
            {
                "choices": [
                    {
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "c1",
                                    "function": {
                                        "name": "get_weather",
                                        "arguments": '{"city": "Par',
                                    },
                                }
                            ]
                        }
                    }
                ]
            },
            {"choices": [{"delta": {}, "finish_reason": "length"}]},
        ],
        done=True,
    )
    events: list[Any] = []
    with pytest.raises(TruncatedToolCallError) as caught:
        events.extend(compat(None, WholeReader()).stream("wire/m", "x", tools=TOOLS))
    assert (caught.value.tool_name, caught.value.arguments) == ("get_weather", '{"city": "Par')
    response = caught.value.partial
    assert response is not None
    assert response.tool_calls == [] and response.stop_reason == "max_tokens"
    assert response.metadata["truncated_tool_calls"] == [
        {"id": "c1", "name": "get_weather", "arguments": '{"city": "Par'}
    ]
    assert any(isinstance(e, Notice) and e.kind == "truncated_tool_call" for e in events)


def test_broken_arguments_are_repaired_or_kept_as_a_string(compat, wire_server):
    wire_server.add_sse(
        [
            {
                "choices": [
                    {
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "c1",
                                    "function": {"name": "a", "arguments": "{city: 'Oslo',}"},
                                },
                                {
                                    "index": 1,
                                    "id": "c2",
                                    "function": {"name": "b", "arguments": '{"x": 1'},
                                },
                                {"index": 2, "function": {"name": "c"}},
                                {"index": 3, "function": {"name": "d", "arguments": {"k": True}}},
                            ]
                        }
                    }
                ]
            },
            {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]},
        ],
        done=True,
    )
    response = compat().complete("wire/m", "x")
    calls = response.tool_calls
    assert [c.input for c in calls] == [{"city": "Oslo"}, '{"x": 1', {}, {"k": True}]
    assert calls[2].id.startswith("call_")  # a missing id is generated
    assert set(response.metadata["tool_call_repairs"]["c1"]) == {
        "unquoted key",
        "single-quoted string",
        "trailing comma",
    }


def test_end_to_end_with_modelplug_textcalls(compat, wire_server):
    pytest.importorskip("modelplug_textcalls")
    import modelplug_textcalls

    wire_server.add_sse(pieces(CALL_TEXT), done=True)
    response = compat(None, modelplug_textcalls).complete("wire/m", "x", tools=TOOLS)
    assert [(c.name, c.input) for c in response.tool_calls] == [("get_weather", {"city": "Paris"})]


def test_calls_that_reuse_an_index_with_new_ids_stay_apart(compat, wire_server):
    wire_server.add_sse(
        [
            {
                "choices": [
                    {
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "a",
                                    "function": {"name": "f", "arguments": '{"n": 1}'},
                                }
                            ]
                        }
                    }
                ]
            },
            {
                "choices": [
                    {
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "b",
                                    "function": {"name": "f", "arguments": '{"n": 2}'},
                                }
                            ]
                        }
                    }
                ]
            },
            {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]},
        ],
        done=True,
    )
    response = compat().complete("wire/m", "x")
    assert [(c.id, c.input) for c in response.tool_calls] == [("a", {"n": 1}), ("b", {"n": 2})]
