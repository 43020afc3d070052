"""Gemini's ``extra_content.google.thought_signature`` on a tool call: kept on the
ToolUseBlock and sent back unchanged, to the model that produced it only."""

from __future__ import annotations

from pathlib import Path

from modelplug.contract.types import Message, ToolResultBlock, ToolSpec

RECORDINGS = Path(__file__).parent / "recordings"
SIGNATURE = {"extra_content": {"google": {"thought_signature": "Eo4GCosG==="}}}
DONE = [{"choices": [{"delta": {"content": "done"}, "finish_reason": "stop"}]}]


def first_turn(client, wire_server):
    wire_server.add_file(RECORDINGS / "gemini_thought_signature.sse")
    response = client.complete("wire/gemini-3.1-flash-lite", "go", tools=[ToolSpec(name="task")])
    return response


def test_the_signature_is_kept_on_the_tool_use_block(compat, wire_server):
    response = first_turn(compat(), wire_server)
    [call] = response.tool_calls
    assert (call.id, call.name, call.input) == ("FL1tqiJ9", "task", {})
    assert call.wire == SIGNATURE
    assert response.stop_reason == "tool_use"


def conversation(response):
    return [
        Message(role="user", content="go"),
        response.message,
        Message(role="user", content=[ToolResultBlock(tool_use_id="FL1tqiJ9", content="ok")]),
    ]


def test_the_signature_goes_back_unchanged_to_the_same_model(compat, wire_server):
    client = compat()
    response = first_turn(client, wire_server)
    wire_server.add_sse(DONE, done=True)
    client.complete("wire/gemini-3.1-flash-lite", conversation(response))
    [assistant] = [
        m for m in wire_server.requests[-1].json()["messages"] if m["role"] == "assistant"
    ]
    [call] = assistant["tool_calls"]
    assert call["extra_content"] == SIGNATURE["extra_content"]
    assert call["function"] == {"name": "task", "arguments": "{}"}


def test_the_signature_never_goes_to_another_model(compat, wire_server):
    client = compat()
    response = first_turn(client, wire_server)
    wire_server.add_sse(DONE, done=True)
    client.complete("wire/other-model", conversation(response))
    [assistant] = [
        m for m in wire_server.requests[-1].json()["messages"] if m["role"] == "assistant"
    ]
    [call] = assistant["tool_calls"]
    assert "extra_content" not in call
    assert call["id"] == "FL1tqiJ9"  # the call itself is portable
