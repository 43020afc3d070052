"""The /api/chat body: messages, tools, think, options, keep_alive and extra."""

from __future__ import annotations

import base64

import pytest
from modelplug import RequestError
from modelplug.contract.types import (
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x01" * 8).decode()
TOOLS = [ToolSpec(name="get_temperature", description="Get the temperature")]


def sent(ollama, wire, request, config=None, **fields):
    wire.chat("text.jsonl")
    ollama(config).complete("ollama/qwen3", request, **fields)
    return wire.requests[-1].json()


def test_system_user_assistant_calls_and_tool_results_map_to_ollama_messages(ollama, wire):
    call = ToolUseBlock(id="call_1", name="get_temperature", input={"city": "New York"})
    messages = [
        Message(role="user", content="What is the temperature in New York?"),
        Message(role="assistant", content=[TextBlock(text="Checking."), call]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="call_1", content="22°C")]),
    ]
    body = sent(ollama, wire, {"system": "Be brief.", "messages": messages}, tools=TOOLS)
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is the temperature in New York?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "function": {
                        "index": 0,
                        "name": "get_temperature",
                        "arguments": {"city": "New York"},
                    },
                }
            ],
        },
        {
            "role": "tool",
            "content": "22°C",
            "tool_call_id": "call_1",
            "tool_name": "get_temperature",
        },
    ]


def test_tool_result_images_follow_in_a_user_message_with_a_note(ollama, wire):
    call = ToolUseBlock(id="c1", name="shot", input={})
    image = ImageBlock(data=PNG, media_type="image/png")
    result = ToolResultBlock(tool_use_id="c1", content=[image], is_error=False)
    messages = [
        Message(role="user", content="take a screenshot"),
        Message(role="assistant", content=[call]),
        Message(role="user", content=[result]),
    ]
    body = sent(ollama, wire, messages, tools=[ToolSpec(name="shot")])
    tool, user = body["messages"][-2:]
    assert tool == {
        "role": "tool",
        "content": "(the result is the image(s) below)",
        "tool_call_id": "c1",
        "tool_name": "shot",
    }
    assert user == {
        "role": "user",
        "content": "[The tool result c1 included 1 image(s); they follow.]",
        "images": [PNG],
    }


def test_an_error_result_says_so(ollama, wire):
    call = ToolUseBlock(id="c1", name="shot", input={})
    messages = [
        Message(role="user", content="go"),
        Message(role="assistant", content=[call]),
        Message(
            role="user", content=[ToolResultBlock(tool_use_id="c1", content="boom", is_error=True)]
        ),
    ]
    body = sent(ollama, wire, messages, tools=[ToolSpec(name="shot")])
    assert body["messages"][-1]["content"] == "Error: boom"


def test_a_data_url_image_is_sent_as_base64(ollama, wire):
    image = ImageBlock(url=f"data:image/png;base64,{PNG}")
    body = sent(ollama, wire, [Message(role="user", content=[TextBlock(text="see"), image])])
    assert body["messages"][0]["images"] == [PNG]


def test_an_image_url_is_refused_before_sending(ollama, wire):
    image = ImageBlock(url="https://example.invalid/cat.png")
    with pytest.raises(RequestError, match="base64"):
        ollama().complete("ollama/llava", [Message(role="user", content=[image])])
    assert wire.requests == []


def test_sampling_options_num_predict_and_stop_go_into_options(ollama, wire):
    body = sent(
        ollama,
        wire,
        "hi",
        max_tokens=100,
        temperature=0.2,
        top_p=0.9,
        top_k=20,
        seed=42,
        stop=["\n", "user:"],
    )
    assert body["options"] == {
        "num_ctx": 32768,
        "num_predict": 100,
        "temperature": 0.2,
        "top_p": 0.9,
        "top_k": 20,
        "seed": 42,
        "stop": ["\n", "user:"],
    }


def test_num_ctx_is_the_context_window_of_the_settings(ollama, wire):
    extra = {"models": {"ollama/qwen3": {"context_window": 65536}}}
    body = sent(ollama, wire, "hi", extra)
    assert body["options"]["num_ctx"] == 65536


@pytest.mark.parametrize(
    ("thinking", "think"),
    [
        ({"enabled": False}, False),
        ({}, True),
        ({"effort": "minimal"}, "low"),
        ({"effort": "medium"}, "medium"),
        ({"effort": "xhigh"}, "high"),
        ({"effort": "max"}, "max"),
    ],
)
def test_think_from_the_thinking_request(ollama, wire, thinking, think):
    assert sent(ollama, wire, "hi", thinking=thinking)["think"] == think


def test_no_thinking_request_sends_no_think(ollama, wire):
    assert "think" not in sent(ollama, wire, "hi")


def test_keep_alive_comes_from_the_settings(ollama, wire):
    assert sent(ollama, wire, "hi", {"ollama": {"keep_alive": "30m"}})["keep_alive"] == "30m"
    assert sent(ollama, wire, "hi", {"ollama": {"keep_alive": -1}})["keep_alive"] == -1
    assert "keep_alive" not in sent(ollama, wire, "hi")


def test_extra_is_passed_through_and_its_options_merge(ollama, wire):
    body = sent(
        ollama,
        wire,
        "hi",
        max_tokens=9,
        extra={"options": {"num_predict": 7, "min_p": 0.05}, "raw": False},
    )
    assert body["options"]["num_predict"] == 7
    assert body["options"]["min_p"] == 0.05
    assert body["options"]["num_ctx"] == 32768
    assert body["raw"] is False


def test_tool_choice_none_sends_no_tools(ollama, wire):
    body = sent(ollama, wire, "hi", tools=TOOLS, tool_choice="none")
    assert "tools" not in body


def test_extra_options_that_are_not_a_table_are_refused_before_sending(ollama, wire):
    with pytest.raises(RequestError, match="extra"):
        ollama().complete("ollama/qwen3", "hi", extra={"options": 5})
    assert wire.requests == []
