"""Recorded Responses API streams played through the real loopback socket."""

from __future__ import annotations

from modelplug.contract.types import (
    OpaqueBlock,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallStart,
    ToolUseBlock,
)


def deltas(events, kind=TextDelta):
    return "".join(e.text for e in events if isinstance(e, kind))


def test_modelplug_stream_text(responses, wire_server, wire, recorded):
    wire_server.add_file(recorded / "text.sse")
    events, response = wire.run(responses(), "wire/gpt-5.1-codex-max")
    assert deltas(events) == "The final result is **570**."
    assert response.message.content == [TextBlock(text="The final result is **570**.")]
    assert response.stop_reason == "end_turn"
    assert response.model == response.message.model == "wire/gpt-5.1-codex-max"
    assert (response.usage.input, response.usage.output, response.usage.reported) == (299, 12, True)
    assert (
        response.metadata["response_id"]
        == "resp_01830d662ab3856501693c3217ba4c8190a3ddf6c839d4f12a"
    )
    assert "served_model" not in response.metadata  # the route names the model


def test_modelplug_stream_usage_excludes_cached_input(responses, wire_server, wire, recorded):
    wire_server.add_file(recorded / "text_cached.sse")
    _, response = wire.run(responses(), "wire/gpt-4o")
    usage = response.usage
    # input_tokens 543 includes 234 cached; output 478 includes 123 of reasoning.
    assert (usage.input, usage.cache_read, usage.output, usage.reasoning) == (309, 234, 478, 123)
    assert usage.total_input == 543
    assert response.metadata["served_model"] == "gpt-4o-2024-07-18"


def test_modelplug_stream_parallel_function_calls(responses, wire_server, wire, recorded):
    wire_server.add_file(recorded / "parallel_calls.sse")
    events, response = wire.run(responses(), "wire/gpt-4o")
    starts = [(e.name, e.index) for e in events if isinstance(e, ToolCallStart)]
    assert starts == [("currentLocation", 0), ("weather", 1)]
    # The call ids are the completed items' call_id (the API's final word).
    assert response.tool_calls == [
        ToolUseBlock(id="call_KsVqaVAf3alAtCCkQe4itE7W", name="currentLocation", input={}),
        ToolUseBlock(
            id="call_X2PAkDJInno9VVnNkDrfhboW", name="weather", input={"location": "Rome"}
        ),
    ]
    assert response.stop_reason == "tool_use"
    assert response.text == ""


def test_modelplug_stream_reasoning_summary_and_encrypted_content(
    responses, wire_server, wire, recorded
):
    wire_server.add_file(recorded / "reasoning_tool_turn1.sse")
    events, response = wire.run(responses(), "wire/gpt-5.1-codex-max")
    summary = (
        "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then "
        "multiply the result by 3, and finally multiply that by 10, reporting the final product."
    )
    assert deltas(events, ThinkingDelta) == summary
    thinking, call = response.message.content
    assert isinstance(thinking, ThinkingBlock) and thinking.text == summary
    # The item exactly as the completed response carried it, encrypted content included.
    assert thinking.wire == wire.final_output("reasoning_tool_turn1.sse")[0]
    assert thinking.wire["encrypted_content"].startswith("gAAAAABpPDIVYBwu")
    assert call == ToolUseBlock(
        id="call_AB6AaRZ1FYZB2RwS6A5vbdqn", name="calculator", input={"a": 12, "b": 7, "op": "add"}
    )
    assert [e.id for e in events if isinstance(e, ToolCallStart)] == [call.id]
    assert response.stop_reason == "tool_use"


def test_modelplug_stream_hidden_thinking_keeps_the_item(responses, wire_server, wire, recorded):
    wire_server.add_file(recorded / "reasoning_tool_turn1.sse")
    events, response = wire.run(
        responses(), "wire/gpt-5.1-codex-max", thinking={"effort": "high", "hide": True}
    )
    assert not [e for e in events if isinstance(e, ThinkingDelta)]
    thinking = response.message.content[0]
    assert isinstance(thinking, ThinkingBlock) and thinking.text == ""
    assert thinking.wire == wire.final_output("reasoning_tool_turn1.sse")[0]


def test_modelplug_stream_web_search_citations_and_calls(responses, wire_server, wire, recorded):
    wire_server.add_file(recorded / "web_search.sse")
    events, response = wire.run(
        responses(), "wire/gpt-5-mini", server_tools=[{"type": "web_search"}]
    )
    output = wire.final_output("web_search.sse")
    searches = [b for b in response.message.content if isinstance(b, OpaqueBlock)]
    assert [b.wire for b in searches] == [i for i in output if i["type"] == "web_search_call"]
    assert {b.kind for b in searches} == {"openai.web_search_call"}
    assert searches[0].text == "web search: tech news today December 5 2025"
    texts = [b for b in response.message.content if isinstance(b, TextBlock)]
    assert len(texts) == 1
    message = next(i for i in output if i["type"] == "message")
    assert texts[0].text == message["content"][0]["text"] == deltas(events)
    assert texts[0].citations == message["content"][0]["annotations"]
    assert texts[0].citations[0]["type"] == "url_citation"
    assert response.usage.web_searches == len(searches) == 6
    assert response.stop_reason == "end_turn"


def test_modelplug_stream_incomplete_at_max_output_tokens(responses, wire_server, wire, recorded):
    wire_server.add_file(recorded / "incomplete.sse")
    events, response = wire.run(responses(), "wire/gpt-4o", max_tokens=100)
    assert response.stop_reason == "max_tokens"
    assert response.text == deltas(events) == "Hello,"
    assert wire_server.requests[0].json()["max_output_tokens"] == 100


def test_modelplug_stream_content_filter_is_a_refusal(responses, wire_server, wire, recorded):
    events = [
        {"type": "response.created", "response": {"id": "resp_1", "model": "gpt-4o"}},
        {
            "type": "response.incomplete",
            "response": {
                "id": "resp_1",
                "status": "incomplete",
                "incomplete_details": {"reason": "content_filter"},
                "output": [],
                "usage": {"input_tokens": 5, "output_tokens": 0},
            },
        },
    ]
    # Invented from the documented incomplete_details reasons.
    wire_server.add_sse(events, event_names=True)
    _, response = wire.run(responses(), "wire/gpt-4o")
    assert response.stop_reason == "refusal"
    assert (response.usage.input, response.usage.output) == (5, 0)


def test_modelplug_stream_joins_argument_deltas_per_item(responses, wire_server, wire):
    # parallel_calls.sse without its output_item.done events and with a final event
    # that lists no output (as some proxies send it): the calls come from the
    # output_item.added events and their argument deltas, joined per item.
    events = [
        e
        for e in wire.recorded_events("parallel_calls.sse")
        if e["type"] != "response.output_item.done"
    ]
    events[-1] = {**events[-1], "response": {**events[-1]["response"], "output": []}}
    wire_server.add_sse(events, event_names=True)
    _, response = wire.run(responses(), "wire/gpt-4o")
    assert [(c.name, c.input) for c in response.tool_calls] == [
        ("currentLocation", {}),
        ("weather", {"location": "Rome"}),
    ]
    assert response.stop_reason == "tool_use"


def test_modelplug_stream_reads_events_without_event_lines(responses, wire_server, wire):
    # Some proxies send only data: lines; the event's own "type" then says what it is.
    client = responses()
    wire_server.add_file(wire.RECORDED / "reasoning_tool_turn1.sse")
    named_events, named = wire.run(client, "wire/gpt-5.1-codex-max")
    wire_server.add_sse(wire.recorded_events("reasoning_tool_turn1.sse"))
    plain_events, plain = wire.run(client, "wire/gpt-5.1-codex-max")
    assert plain.model_dump() == named.model_dump()
    assert [e.model_dump() for e in plain_events] == [e.model_dump() for e in named_events]
