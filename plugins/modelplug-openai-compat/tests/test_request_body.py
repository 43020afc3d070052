"""The exact JSON body sent to POST <base>/chat/completions."""

from __future__ import annotations

import pytest
from modelplug import DEFAULT_BUDGET_MESSAGE
from modelplug.contract.types import (
    ImageBlock,
    Message,
    OpaqueBlock,
    Request,
    TextBlock,
    ThinkingBlock,
    ThinkingRequest,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)

DONE = [{"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}]


def sent(compat, wire_server, request, spec="wire/m", extra=None, **provider):
    wire_server.add_sse(DONE, done=True)
    compat(extra, **provider).complete(spec, request)
    recorded = wire_server.requests[-1]
    assert recorded.method == "POST" and recorded.path == "/v1/chat/completions"
    return recorded.json()


def test_a_plain_request(compat, wire_server):
    body = sent(compat, wire_server, "hi")
    assert body == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_tools_options_and_extra(compat, wire_server):
    tool = ToolSpec(
        name="get_weather",
        description="Weather for a city",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
    )
    request = Request(
        system="Be brief.",
        messages=[Message(role="user", content="Paris?")],
        tools=[tool],
        tool_choice="any",
        max_tokens=100,
        stop=["END"],
        temperature=0.2,
        top_p=0.9,
        top_k=40,
        seed=7,
        extra={"repeat_penalty": 1.1},
    )
    body = sent(compat, wire_server, request)
    assert body == {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Paris?"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Weather for a city",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
            }
        ],
        "tool_choice": "required",
        "max_tokens": 100,
        "stop": ["END"],
        "temperature": 0.2,
        "top_p": 0.9,
        "top_k": 40,
        "seed": 7,
        "repeat_penalty": 1.1,
    }


def test_a_named_tool_choice(compat, wire_server):
    request = Request(
        messages=[Message(role="user", content="x")], tools=[ToolSpec(name="f")], tool_choice="f"
    )
    body = sent(compat, wire_server, request)
    assert body["tool_choice"] == {"type": "function", "function": {"name": "f"}}


def test_tool_results_become_tool_messages_then_a_user_message(compat, wire_server):
    image = ImageBlock(media_type="image/png", data="iVBORw0KGgo=")
    request = Request(
        messages=[
            Message(role="user", content="Look at both"),
            Message(
                role="assistant",
                model="other/model",
                content=[
                    TextBlock(text="Calling."),
                    ToolUseBlock(id="c1", name="read", input={"path": "a.txt"}),
                    ToolUseBlock(id="c2", name="shot", input={}),
                ],
            ),
            Message(
                role="user",
                content=[
                    ToolResultBlock(tool_use_id="c1", content="file body"),
                    ToolResultBlock(tool_use_id="c2", content=[image], is_error=False),
                    TextBlock(text="What do you see?"),
                ],
            ),
        ]
    )
    body = sent(compat, wire_server, request)
    assert body["messages"] == [
        {"role": "user", "content": "Look at both"},
        {
            "role": "assistant",
            "content": "Calling.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "a.txt"}'},
                },
                {"id": "c2", "type": "function", "function": {"name": "shot", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "file body"},
        {"role": "tool", "tool_call_id": "c2", "content": "(the result is the image(s) below)"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[The tool result c2 included 1 image(s); they follow.]"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                {"type": "text", "text": "What do you see?"},
            ],
        },
    ]


def test_an_error_result_and_broken_arguments_go_back_as_they_were(compat, wire_server):
    request = Request(
        messages=[
            Message(role="user", content="go"),
            Message(role="assistant", content=[ToolUseBlock(id="c1", name="f", input='{"a": ')]),
            Message(
                role="user",
                content=[ToolResultBlock(tool_use_id="c1", content="bad JSON", is_error=True)],
            ),
        ]
    )
    messages = sent(compat, wire_server, request)["messages"]
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == '{"a": '
    assert messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "Error: bad JSON"}
    assert len(messages) == 3  # no empty user message after the results


def test_replay_rules_for_thinking_and_foreign_search_blocks(compat, wire_server):
    own = ThinkingBlock(text="I think", wire={"reasoning_content": "I think"})
    foreign = ThinkingBlock(text="secret", signature="sig", wire={"type": "thinking"})
    search = OpaqueBlock(
        kind="web_search_tool_result",
        wire={
            "type": "web_search_tool_result",
            "tool_use_id": "s1",
            "content": [
                {
                    "type": "web_search_result",
                    "title": "Example",
                    "url": "https://ex.am/ple",
                    "encrypted_content": "xyz",
                }
            ],
        },
    )
    request = Request(
        messages=[
            Message(role="user", content="q1"),
            Message(role="assistant", model="wire/m", content=[own, TextBlock(text="a1")]),
            Message(role="user", content="q2"),
            Message(
                role="assistant",
                model="anthropic/claude",
                content=[foreign, search, TextBlock(text="a2")],
            ),
            Message(role="user", content="q3"),
            Message(role="assistant", model="anthropic/claude", content=[foreign]),
            Message(role="user", content="q4"),
        ]
    )
    messages = sent(compat, wire_server, request)["messages"]
    assert messages == [
        {"role": "user", "content": "q1"},
        {"role": "assistant", "reasoning_content": "I think", "content": "a1"},
        {"role": "user", "content": "q2"},
        {"role": "assistant", "content": "Web search results:\n- Example (https://ex.am/ple)a2"},
        {"role": "user", "content": "q3"},
        {"role": "user", "content": "q4"},
    ]


@pytest.mark.parametrize(
    ("provider", "dialect", "thinking", "expected"),
    [
        (
            "llamacpp",
            None,
            ThinkingRequest(budget_tokens=512),
            {
                "chat_template_kwargs": {"enable_thinking": True},
                "reasoning_budget_tokens": 512,
                "reasoning_budget_message": DEFAULT_BUDGET_MESSAGE,
            },
        ),
        (
            "vllm",
            None,
            ThinkingRequest(budget_tokens=512),
            {"chat_template_kwargs": {"enable_thinking": True}, "reasoning_budget_tokens": 512},
        ),
        (
            "llamacpp",
            None,
            ThinkingRequest(enabled=False),
            {"chat_template_kwargs": {"enable_thinking": False}},
        ),
        ("openrouter", None, ThinkingRequest(effort="high"), {"reasoning": {"effort": "high"}}),
        (
            "openrouter",
            None,
            ThinkingRequest(budget_tokens=4000),
            {"reasoning": {"max_tokens": 4000}},
        ),
        ("openrouter", None, ThinkingRequest(enabled=False), {"reasoning": {"enabled": False}}),
        ("wire", None, ThinkingRequest(effort="low"), {"reasoning_effort": "low"}),
        ("wire", "openrouter", ThinkingRequest(effort="max"), {"reasoning": {"effort": "high"}}),
        (
            "wire",
            "anthropic",
            ThinkingRequest(budget_tokens=2048),
            {"thinking": {"type": "enabled", "budget_tokens": 2048}},
        ),
    ],
)
def test_reasoning_dialects(compat, wire_server, provider, dialect, thinking, expected):
    extra = {"models": {f"{provider}/m": {"reasoning_dialect": dialect}}} if dialect else None
    request = Request(messages=[Message(role="user", content="x")], thinking=thinking)
    wire_server.add_sse(DONE, done=True)
    environ = {"OPENROUTER_API_KEY": "sk-or-test-123456"}
    compat(extra, name=provider, environ=environ).complete(f"{provider}/m", request)
    body = wire_server.requests[-1].json()
    extras = {
        k: v for k, v in body.items() if k not in ("model", "messages", "stream", "stream_options")
    }
    assert extras == expected


def test_openai_gets_max_completion_tokens(compat, wire_server):
    wire_server.add_sse(DONE, done=True)
    client = compat(name="openai", environ={"OPENAI_API_KEY": "sk-test-openai-123456"})
    client.complete("openai/gpt-5-mini", "x", max_tokens=50)
    body = wire_server.requests[-1].json()
    assert body["max_completion_tokens"] == 50 and "max_tokens" not in body
