"""The generateContent body: system instruction, roles, images, tools, tool choice,
generation and thinking config, web search, pass-through. Built without a network:
``build_body`` is a pure function of the Request and the Route."""

from __future__ import annotations

from typing import Any

import pytest
from modelplug import Endpoint, RequestError, Route
from modelplug.contract.types import (
    ImageBlock,
    Message,
    Request,
    ServerTool,
    TextBlock,
    ThinkingBlock,
    ThinkingRequest,
    ToolSpec,
)
from modelplug.host.known_providers import example_spec
from modelplug_gemini.request import build_body


def route(model: str = "gemini-2.5-flash") -> Route:
    return Route(provider="gemini", model=model, endpoint=Endpoint(type="gemini"))


def body(model: str = "gemini-2.5-flash", **fields: Any) -> dict[str, Any]:
    fields.setdefault("messages", [Message(role="user", content="hi")])
    return build_body(Request(**fields), route(model))


def test_system_instruction_and_roles() -> None:
    messages = [
        Message(role="user", content="Hello"),
        Message(role="assistant", content="Hi there", model="openai/gpt-5"),
        Message(role="user", content="Bye"),
    ]
    sent = body(system="Be brief.", messages=messages)
    assert sent["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert [c["role"] for c in sent["contents"]] == ["user", "model", "user"]
    assert sent["contents"][1]["parts"] == [{"text": "Hi there"}]


def test_images_inline_and_by_uri() -> None:
    message = Message(
        role="user",
        content=[
            TextBlock(text="What is this?"),
            ImageBlock(media_type="image/jpeg", data="/9j/4AAQ"),
            ImageBlock(url="gs://bucket/cat.png", media_type="image/png"),
        ],
    )
    assert body(messages=[message])["contents"][0]["parts"] == [
        {"text": "What is this?"},
        {"inlineData": {"mimeType": "image/jpeg", "data": "/9j/4AAQ"}},
        {"fileData": {"fileUri": "gs://bucket/cat.png", "mimeType": "image/png"}},
    ]


def test_foreign_thinking_never_goes_to_gemini() -> None:
    answer = Message(
        role="assistant",
        content=[ThinkingBlock(text="secret plan", signature="sig"), TextBlock(text="Done")],
        model=example_spec("anthropic"),
    )
    sent = body(
        messages=[Message(role="user", content="go"), answer, Message(role="user", content="ok")]
    )
    assert sent["contents"][1]["parts"] == [{"text": "Done"}]


def test_generation_config() -> None:
    sent = body(max_tokens=100, temperature=0.2, top_p=0.9, top_k=40, stop=["END"], seed=7)
    assert sent["generationConfig"] == {
        "maxOutputTokens": 100,
        "temperature": 0.2,
        "topP": 0.9,
        "topK": 40,
        "stopSequences": ["END"],
        "seed": 7,
    }


@pytest.mark.parametrize(
    ("model", "thinking", "config"),
    [
        (
            "gemini-2.5-flash",
            ThinkingRequest(effort="medium"),
            {"thinkingBudget": 8192, "includeThoughts": True},
        ),
        (
            "gemini-2.5-flash",
            ThinkingRequest(effort="max"),
            {"thinkingBudget": 24576, "includeThoughts": True},
        ),
        (
            "gemini-2.5-pro",
            ThinkingRequest(effort="max"),
            {"thinkingBudget": 32768, "includeThoughts": True},
        ),
        (
            "gemini-2.5-flash",
            ThinkingRequest(budget_tokens=1000, hide=True),
            {"thinkingBudget": 1000},
        ),
        ("gemini-2.5-flash", ThinkingRequest(enabled=False), {"thinkingBudget": 0}),
        ("gemini-2.5-pro", ThinkingRequest(enabled=False), {"thinkingBudget": 128}),
        (
            "gemini-3-pro-preview",
            ThinkingRequest(effort="medium"),
            {"thinkingLevel": "high", "includeThoughts": True},
        ),
        (
            "gemini-3-pro-preview",
            ThinkingRequest(effort="low"),
            {"thinkingLevel": "low", "includeThoughts": True},
        ),
        (
            "gemini-3-flash-preview",
            ThinkingRequest(effort="medium"),
            {"thinkingLevel": "medium", "includeThoughts": True},
        ),
        ("gemini-3-flash-preview", ThinkingRequest(enabled=False), {"thinkingLevel": "minimal"}),
        ("gemini-3-flash-preview", ThinkingRequest(), {"includeThoughts": True}),
        ("gemini-3-flash-preview", ThinkingRequest(display="omitted"), None),
        ("gemini-2.0-flash", ThinkingRequest(effort="high"), None),
    ],
)
def test_thinking_config_per_model(
    model: str, thinking: ThinkingRequest, config: dict[str, Any] | None
) -> None:
    sent = body(model, thinking=thinking)
    assert sent.get("generationConfig", {}).get("thinkingConfig") == config


def test_tools_and_tool_choice() -> None:
    tools = [
        ToolSpec(
            name="read_file",
            description="Read a file.",
            input_schema={
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        ),
        ToolSpec(name="now"),
    ]
    sent = body(tools=tools, tool_choice="read_file")
    assert sent["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "read_file",
                    "description": "Read a file.",
                    "parameters": {
                        "type": "object",
                        "properties": {"path": {"type": "string"}},
                        "required": ["path"],
                    },
                },
                {"name": "now"},
            ]
        }
    ]
    assert sent["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read_file"]}
    }
    for choice, mode in (("auto", "AUTO"), ("any", "ANY"), ("none", "NONE")):
        assert body(tools=tools, tool_choice=choice)["toolConfig"] == {
            "functionCallingConfig": {"mode": mode}
        }


def test_web_search_is_the_google_search_tool() -> None:
    assert body(server_tools=[ServerTool(blocked_domains=["spam.example"])])["tools"] == [
        {"googleSearch": {"excludeDomains": ["spam.example"]}}
    ]
    with pytest.raises(RequestError, match="allowed_domains"):
        body(server_tools=[ServerTool(allowed_domains=["docs.python.org"])])


def test_extra_and_safety_settings_pass_through() -> None:
    safety = [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]
    sent = body(
        max_tokens=50,
        extra={
            "safetySettings": safety,
            "generationConfig": {"responseMimeType": "application/json"},
        },
    )
    assert sent["safetySettings"] == safety
    assert sent["generationConfig"] == {
        "maxOutputTokens": 50,
        "responseMimeType": "application/json",
    }


def test_broken_arguments_from_another_model_are_repaired_or_kept() -> None:
    from modelplug.contract.types import ToolResultBlock, ToolUseBlock

    calls = Message(
        role="assistant",
        content=[
            ToolUseBlock(id="a", name="f", input='{"x": 1,}'),
            ToolUseBlock(id="b", name="f", input="not json at all"),
        ],
        model="ollama/qwen3",
    )
    results = Message(
        role="user",
        content=[
            ToolResultBlock(tool_use_id="a", content="1"),
            ToolResultBlock(tool_use_id="b", content="2"),
        ],
    )
    sent = body(
        messages=[Message(role="user", content="go"), calls, results], tools=[ToolSpec(name="f")]
    )
    args = [p["functionCall"]["args"] for p in sent["contents"][1]["parts"]]
    assert args == [{"x": 1}, {"arguments": "not json at all"}]
