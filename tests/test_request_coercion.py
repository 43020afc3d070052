"""A Request is taken from a plain string, OpenAI-style dicts, a dict or a Request."""

from __future__ import annotations

import pytest
from modelplug import as_request, to_openai_messages
from modelplug.contract.errors import RequestError
from modelplug.contract.types import ImageBlock, Request, TextBlock, ToolResultBlock, ToolUseBlock


def test_plain_string_prompt_becomes_one_user_message() -> None:
    request = as_request("hi there")
    assert [m.role for m in request.messages] == ["user"]
    assert request.messages[0].content == [TextBlock(text="hi there")]


def test_openai_messages_convert_exactly() -> None:
    request = as_request(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "weather in Paris and Rome?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                    },
                    {
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": "Ro'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": "18C"},
            {"role": "tool", "tool_call_id": "call_b", "content": "bad arguments"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "and this?"},
                    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}},
                ],
            },
        ],
        tools=[{"name": "weather"}],
    )
    assert request.system == "Be brief."
    roles = [m.role for m in request.messages]
    assert roles == ["user", "assistant", "user", "user"]
    calls = request.messages[1].content
    assert calls == [
        ToolUseBlock(id="call_a", name="weather", input={"city": "Paris"}),
        ToolUseBlock(id="call_b", name="weather", input='{"city": "Ro'),
    ]
    results = request.messages[2].content
    assert results == [
        ToolResultBlock(tool_use_id="call_a", content=[TextBlock(text="18C")]),
        ToolResultBlock(tool_use_id="call_b", content=[TextBlock(text="bad arguments")]),
    ]
    image = request.messages[3].content[1]
    assert image == ImageBlock(media_type="image/jpeg", data="/9j/4AAQ")


def test_openai_round_trip_keeps_the_conversation() -> None:
    original = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "u1"},
        {
            "role": "assistant",
            "content": "sure",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
    ]
    assert to_openai_messages(as_request(original, tools=[{"name": "f"}])) == original


def test_a_dict_of_request_fields_is_accepted() -> None:
    request = as_request(
        {"system": "S", "messages": [{"role": "user", "content": "x"}], "max_tokens": 5}
    )
    assert request.system == "S" and request.max_tokens == 5


def test_tool_result_without_matching_tool_use_is_rejected_before_any_call() -> None:
    with pytest.raises(ValueError, match="no matching tool_use"):
        as_request(
            [
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "nope", "content": "x"}],
                }
            ]
        )


def test_tool_choice_must_name_a_tool_of_the_request() -> None:
    with pytest.raises(ValueError, match="tool_choice names 'search'"):
        Request(messages=[], tools=[{"name": "calc"}], tool_choice="search")  # type: ignore[list-item]


def test_unknown_role_names_the_message() -> None:
    with pytest.raises(ValueError, match=r"messages\[0\]: unknown role 'robot'"):
        as_request([{"role": "robot", "content": "x"}])


def test_client_rejects_an_invalid_request_without_calling_the_model(
    make_client, fake_model
) -> None:  # type: ignore[no-untyped-def]
    from modelplug.testing import text

    client = make_client(fake_model)
    fake_model.add(text("never"))
    with pytest.raises(RequestError, match="no matching tool_use"):
        client.complete("fake/m", [{"role": "tool", "tool_call_id": "x", "content": "r"}])
    assert fake_model.requests == []
