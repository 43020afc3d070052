"""A two-turn tool loop: the second request carries the reasoning item unchanged, and
only to the model that produced it."""

from __future__ import annotations

import json

from modelplug.contract.types import (
    Message,
    OpaqueBlock,
    Request,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
)
from modelplug.host.known_providers import example_spec

MODEL = "wire/gpt-5.1-codex-max"


def second_turn(first, answer="19"):
    """The conversation after the model's first answer and the tool's result."""
    call = first.tool_calls[0]
    return Request(
        messages=[
            Message(role="user", content="What is (12 + 7) * 3 * 10? Use the calculator."),
            first.message,
            Message(role="user", content=[ToolResultBlock(tool_use_id=call.id, content=answer)]),
        ]
    )


def test_second_request_carries_the_reasoning_item_unchanged(
    responses, wire_server, wire, recorded
):
    wire_server.add_file(recorded / "reasoning_tool_turn1.sse")
    wire_server.add_file(recorded / "reasoning_tool_turn2.sse")
    client = responses()
    _, first = wire.run(client, MODEL, "What is (12 + 7) * 3 * 10? Use the calculator.")
    # The conversation is stored as JSON between the turns, as an application would.
    stored = Request.model_validate_json(second_turn(first).model_dump_json())
    _, second = wire.run(client, MODEL, stored)

    sent = wire_server.requests[1].json()["input"]
    reasoning = wire.final_output("reasoning_tool_turn1.sse")[0]
    assert [item.get("type", "message") for item in sent] == [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert sent[1] == reasoning  # every field, encrypted content included
    assert wire.sdk_checked(sent, "input") == sent
    raw = wire_server.requests[1].body.decode()
    assert json.dumps(reasoning["encrypted_content"]) in raw
    assert sent[2] == {
        "type": "function_call",
        "call_id": "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
        "name": "calculator",
        "arguments": '{"a": 12, "b": 7, "op": "add"}',
    }
    assert sent[3] == {
        "type": "function_call_output",
        "call_id": "call_AB6AaRZ1FYZB2RwS6A5vbdqn",
        "output": "19",
    }
    assert wire_server.requests[1].json()["include"] == ["reasoning.encrypted_content"]
    assert second.tool_calls[0].input == {"a": 19, "b": 3, "op": "multiply"}


def test_another_model_gets_no_reasoning_item(responses, wire_server, wire, recorded):
    wire_server.add_file(recorded / "reasoning_tool_turn1.sse")
    wire_server.add_file(recorded / "reasoning_tool_turn2.sse")
    client = responses()
    _, first = wire.run(client, MODEL, "What is (12 + 7) * 3 * 10?")
    wire.run(client, "wire/gpt-5-mini", second_turn(first))
    sent = wire_server.requests[1].json()["input"]
    assert "reasoning" not in [item.get("type") for item in sent]
    # The portable parts still go: the call and its result.
    assert [item.get("type") for item in sent][1:] == ["function_call", "function_call_output"]


def test_other_vendors_blocks_are_not_sent(responses, wire_server, wire, recorded):
    wire_server.add_file(recorded / "text.sse")
    claude = Message(
        role="assistant",
        model=example_spec("anthropic"),
        content=[
            ThinkingBlock(
                text="hmm", signature="sig", wire={"type": "thinking", "thinking": "hmm"}
            ),
            OpaqueBlock(
                kind="web_search_tool_result",
                wire={
                    "type": "web_search_tool_result",
                    "content": [{"url": "https://example.org/a", "title": "A"}],
                },
            ),
            TextBlock(text="Found it."),
        ],
    )
    request = Request(
        messages=[
            Message(role="user", content="search"),
            claude,
            Message(role="user", content="and?"),
        ]
    )
    wire.run(responses(), MODEL, request)
    sent = wire_server.requests[0].json()["input"]
    assert sent[1] == {
        "type": "message",
        "role": "assistant",
        "content": [
            {
                "type": "output_text",
                "text": "Web search results:\n- A (https://example.org/a)",
                "annotations": [],
            },
            {"type": "output_text", "text": "Found it.", "annotations": []},
        ],
    }
    assert all(item.get("type") != "reasoning" for item in sent)


def test_own_web_search_items_go_back_to_the_same_model(responses, wire_server, wire, recorded):
    wire_server.add_file(recorded / "web_search.sse")
    wire_server.add_file(recorded / "text.sse")
    client = responses()
    _, first = wire.run(
        client, "wire/gpt-5-mini", "tech news?", server_tools=[{"type": "web_search"}]
    )
    follow = Request(
        messages=[
            Message(role="user", content="tech news?"),
            first.message,
            Message(role="user", content="more"),
        ]
    )
    wire.run(client, "wire/gpt-5-mini", follow)
    sent = wire_server.requests[1].json()["input"]
    output = wire.final_output("web_search.sse")
    # This capture was made with store: true, so its reasoning items have no encrypted
    # content; with store: false they cannot go back and are left out.
    assert "reasoning" not in [i.get("type") for i in sent]
    replayed = [i for i in sent if i.get("type") == "web_search_call"]
    assert replayed == [i for i in output if i["type"] == "web_search_call"]
    assert wire.sdk_checked(sent, "input") == sent
    text = next(i for i in output if i["type"] == "message")["content"][0]["text"]
    assert [i["content"][0]["text"] for i in sent if i.get("role") == "assistant"] == [text]


def test_a_reasoning_item_without_encrypted_content_is_left_out_unless_stored(
    responses, wire_server, wire, recorded
):
    bare = {"id": "rs_1", "type": "reasoning", "summary": []}
    message = Message(
        role="assistant",
        model=MODEL,
        content=[ThinkingBlock(wire=bare), TextBlock(text="Done.")],
    )
    request = Request(
        messages=[Message(role="user", content="go"), message, Message(role="user", content="and?")]
    )
    wire_server.add_file(recorded / "text.sse")
    wire.run(responses(), MODEL, request)
    sent = wire_server.requests[0].json()["input"]
    assert [i.get("type") for i in sent] == [None, "message", None]  # no reasoning item
    wire_server.add_file(recorded / "text.sse")
    wire.run(responses({"openai": {"store": True}}), MODEL, request)
    assert wire_server.requests[1].json()["input"][1] == bare


def test_the_same_model_gets_its_url_citations_back_as_they_came(
    responses, wire_server, wire, recorded
):
    # web_search.sse: a real gpt-5-mini capture whose message carries twelve
    # url_citation annotations (see the recording's first line).
    wire_server.add_file(recorded / "web_search.sse")
    wire_server.add_file(recorded / "text.sse")
    wire_server.add_file(recorded / "text.sse")
    client = responses()
    spec = "wire/gpt-5-mini"
    _, first = wire.run(client, spec, "tech news?", server_tools=[{"type": "web_search"}])
    follow = Request(
        messages=[
            Message(role="user", content="tech news?"),
            first.message,
            Message(role="user", content="more"),
        ]
    )
    # Stored as JSON between the turns, as an application would.
    stored = Request.model_validate_json(follow.model_dump_json())
    wire.run(client, spec, stored)

    came = next(i for i in wire.final_output("web_search.sse") if i["type"] == "message")
    annotations = came["content"][0]["annotations"]
    assert len(annotations) == 12 and annotations[0]["type"] == "url_citation"
    sent = wire_server.requests[1].json()["input"]
    messages = [i for i in sent if i.get("role") == "assistant"]
    assert messages == [
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {
                    "type": "output_text",
                    "text": came["content"][0]["text"],
                    "annotations": annotations,
                }
            ],
        }
    ]
    # Byte for byte: the same keys in the same order, the titles' characters unescaped.
    raw = wire_server.requests[1].body.decode()
    assert json.dumps(annotations, ensure_ascii=False) in raw
    assert wire.sdk_checked(sent, "input") == sent
    # The web search calls go back beside it, in their places.
    kinds = [i.get("type") for i in sent]
    assert kinds.index("message", 1) > max(i for i, k in enumerate(kinds) if k == "web_search_call")

    # Another model gets the text (and the searches as lines of text), no annotations.
    wire.run(client, "wire/gpt-5", stored)
    other = [i for i in wire_server.requests[2].json()["input"] if i.get("role") == "assistant"]
    parts = [part for m in other for part in m["content"]]
    assert parts[-1] == {
        "type": "output_text",
        "text": came["content"][0]["text"],
        "annotations": [],
    }
    assert all(part["annotations"] == [] for part in parts)
