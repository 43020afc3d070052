"""The request body: each neutral field mapped, and every body checked against the
openai SDK's own request types (a key the SDK does not know, or a value of the wrong
shape, fails the check)."""

from __future__ import annotations

import pytest
from modelplug.contract.types import (
    ImageBlock,
    Message,
    Notice,
    Request,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)

WEATHER = {
    "name": "weather",
    "description": "The weather in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
PNG = "iVBORw0KGgo="


def sent(
    responses, wire_server, wire, recorded, spec="wire/gpt-4o", request="hi", config=None, **fields
):
    wire_server.add_file(recorded / "text.sse")
    events, _ = wire.run(responses(config), spec, request, **fields)
    body = wire_server.requests[-1].json()
    # Validation keeps only what the SDK's types declare: equal means nothing unknown.
    assert wire.sdk_checked(body) == body
    return body, events


def test_a_plain_request(responses, wire_server, wire, recorded):
    body, _ = sent(
        responses,
        wire_server,
        wire,
        recorded,
        system="Be terse.",
        max_tokens=50,
        temperature=0.2,
        top_p=0.9,
    )
    assert body == {
        "model": "gpt-4o",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "stream": True,
        "store": False,
        "instructions": "Be terse.",
        "max_output_tokens": 50,
        "temperature": 0.2,
        "top_p": 0.9,
    }
    request = wire_server.requests[-1]
    assert request.path == "/v1/responses"
    assert request.headers["authorization"] == f"Bearer {wire.KEY}"


def test_tools_tool_choice_and_strict_when_asked(responses, wire_server, wire, recorded):
    body, _ = sent(responses, wire_server, wire, recorded, tools=[WEATHER], tool_choice="weather")
    assert body["tools"] == [
        {
            "type": "function",
            "name": "weather",
            "description": "The weather in a city",
            "parameters": WEATHER["input_schema"],
            "strict": False,
        }
    ]
    assert body["tool_choice"] == {"type": "function", "name": "weather"}
    body, _ = sent(
        responses,
        wire_server,
        wire,
        recorded,
        config={"openai": {"strict_tools": True}},
        tools=[WEATHER],
        tool_choice="any",
    )
    assert body["tools"][0]["strict"] is True
    assert body["tool_choice"] == "required"


def test_earlier_calls_results_and_images(responses, wire_server, wire, recorded):
    request = Request(
        messages=[
            Message(
                role="user",
                content=[TextBlock(text="look"), ImageBlock(media_type="image/png", data=PNG)],
            ),
            Message(
                role="assistant",
                model="wire/gpt-4o",
                content=[
                    TextBlock(text="Calling."),
                    ToolUseBlock(id="call_1", name="weather", input={"city": "Oslo"}),
                ],
            ),
            Message(
                role="user",
                content=[
                    ToolResultBlock(
                        tool_use_id="call_1",
                        content=[
                            TextBlock(text="cold"),
                            ImageBlock(url="https://example.org/map.png"),
                        ],
                    )
                ],
            ),
            Message(
                role="assistant",
                model="wire/gpt-4o",
                content=[ToolUseBlock(id="call_2", name="weather", input="{broken")],
            ),
            Message(
                role="user",
                content=[ToolResultBlock(tool_use_id="call_2", content="bad input", is_error=True)],
            ),
        ],
        tools=[WEATHER],
    )
    body, _ = sent(responses, wire_server, wire, recorded, request=request)
    assert body["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "look"},
                {
                    "type": "input_image",
                    "image_url": f"data:image/png;base64,{PNG}",
                    "detail": "auto",
                },
            ],
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Calling.", "annotations": []}],
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "weather",
            "arguments": '{"city": "Oslo"}',
        },
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": [
                {"type": "input_text", "text": "cold"},
                {
                    "type": "input_image",
                    "image_url": "https://example.org/map.png",
                    "detail": "auto",
                },
            ],
        },
        {"type": "function_call", "call_id": "call_2", "name": "weather", "arguments": "{broken"},
        {"type": "function_call_output", "call_id": "call_2", "output": "Error: bad input"},
    ]


@pytest.mark.parametrize(
    ("model", "thinking", "reasoning"),
    [
        ("gpt-5", {"effort": "high"}, {"effort": "high", "summary": "auto"}),
        ("gpt-5", {"effort": "max"}, {"effort": "high", "summary": "auto"}),
        ("gpt-5", {"enabled": False}, {"effort": "minimal"}),
        ("gpt-5.1", {"enabled": False}, {"effort": "none"}),
        ("gpt-5.1-codex-max", {"effort": "max"}, {"effort": "xhigh", "summary": "auto"}),
        ("o3", {"effort": "minimal"}, {"effort": "low", "summary": "auto"}),
        ("o4-mini", {"effort": "low", "hide": True}, {"effort": "low"}),
        ("gpt-5", {"display": "omitted"}, None),
        # A budget (an "auto" one too) stands for the effort it would buy elsewhere.
        ("gpt-5", {"budget_tokens": 1500}, {"effort": "low", "summary": "auto"}),
        ("gpt-5", {"budget_tokens": 6000}, {"effort": "medium", "summary": "auto"}),
        ("gpt-5", {"budget_tokens": 30000}, {"effort": "high", "summary": "auto"}),
        ("gpt-5", {"budget_tokens": 30000, "effort": "low"}, {"effort": "low", "summary": "auto"}),
    ],
)
def test_thinking_maps_to_reasoning_effort_and_summary(
    responses, wire_server, wire, recorded, model, thinking, reasoning
):
    body, _ = sent(responses, wire_server, wire, recorded, spec=f"wire/{model}", thinking=thinking)
    assert body.get("reasoning") == reasoning
    assert body["include"] == ["reasoning.encrypted_content"]


def test_a_reasoning_model_gets_no_sampling_and_a_notice_says_so(
    responses, wire_server, wire, recorded
):
    body, events = sent(
        responses, wire_server, wire, recorded, spec="wire/gpt-5", temperature=0.5, stop=["END"]
    )
    assert "temperature" not in body and "stop" not in body
    assert body["include"] == ["reasoning.encrypted_content"]
    notices = [e for e in events if isinstance(e, Notice)]
    assert len(notices) == 1 and "stop, temperature" in notices[0].message


def test_a_model_that_does_not_reason_gets_no_include(responses, wire_server, wire, recorded):
    body, _ = sent(responses, wire_server, wire, recorded, spec="wire/gpt-4.1")
    assert "include" not in body and "reasoning" not in body


def test_web_search_prompt_cache_key_store_and_extra(responses, wire_server, wire, recorded):
    body, _ = sent(
        responses,
        wire_server,
        wire,
        recorded,
        config={"openai": {"prompt_cache_key": "team-a", "store": True}},
        server_tools=[{"type": "web_search", "allowed_domains": ["example.org"]}],
        extra={"service_tier": "flex"},
    )
    assert body["tools"] == [
        {"type": "web_search", "filters": {"allowed_domains": ["example.org"]}}
    ]
    assert body["prompt_cache_key"] == "team-a"
    assert body["store"] is True
    assert body["service_tier"] == "flex"


def test_assistant_text_goes_as_a_message_item_of_output_text_parts(
    responses, wire_server, wire, recorded
):
    # The canonical item form (llama.cpp's /v1/responses refuses a bare
    # {"role": "assistant", "content": "..."}: "Cannot determine type of 'item'"),
    # without the id and status that would name an item nothing stored.
    request = Request(
        messages=[
            Message(role="user", content="Two words?"),
            Message(
                role="assistant",
                content=[TextBlock(text="Hello"), TextBlock(text=" there.")],
            ),
            Message(role="user", content="Again."),
        ]
    )
    body, _ = sent(responses, wire_server, wire, recorded, request=request)
    assert body["input"][1] == {
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "output_text", "text": "Hello", "annotations": []},
            {"type": "output_text", "text": " there.", "annotations": []},
        ],
    }
    assert [item.get("role") for item in body["input"]] == ["user", "assistant", "user"]
