"""The Messages shape's mapping: a request body into a Request, a Response into a
message, errors into Anthropic's error bodies (no server: the pure functions)."""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

import pytest
from modelplug.contract.replay import replayable_messages
from modelplug.contract.types import (
    Cost,
    ImageBlock,
    Message,
    OpaqueBlock,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from modelplug_gateway.shapes.anthropic_messages import SHAPE
from modelplug_gateway.shapes.base import ShapeError

THINKING = {
    "type": "thinking",
    "thinking": "Let me add these. 2 + 2 = 4.",
    "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds2Cx2CTbGwsZ3cYg3kZ7Lq4B=",
}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rL"}


def body(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "model": "anthropic/claude-sonnet-4-6",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "Hello"}],
    }
    base.update(fields)
    return base


def tool_conversation() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {
            "role": "assistant",
            "content": [
                copy.deepcopy(THINKING),
                copy.deepcopy(REDACTED),
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "weather",
                    "input": {"city": "Paris"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [
                        {"type": "text", "text": "18C"},
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
                        },
                    ],
                },
                {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
            ],
        },
    ]


def test_every_block_kind_becomes_its_neutral_block() -> None:
    parsed = SHAPE.parse(body(messages=tool_conversation()))
    user, assistant, results = parsed.request.messages
    assert user.content == [TextBlock(text="Weather in Paris?")]
    thinking, redacted, text, call = assistant.content
    assert isinstance(thinking, ThinkingBlock)
    assert (thinking.text, thinking.signature) == (THINKING["thinking"], THINKING["signature"])
    assert isinstance(redacted, OpaqueBlock) and redacted.kind == "redacted_thinking"
    assert text == TextBlock(text="Checking.")
    assert call == ToolUseBlock(id="toolu_1", name="weather", input={"city": "Paris"})
    result, image = results.content
    assert isinstance(result, ToolResultBlock) and result.text == "18C"
    assert result.images == [ImageBlock(media_type="image/png", data="iVBO")]
    assert image == ImageBlock(url="https://example.com/a.png")


def test_thinking_blocks_sent_back_reach_the_named_model_byte_for_byte() -> None:
    parsed = SHAPE.parse(body(messages=tool_conversation()))
    kept = replayable_messages(parsed.request.messages, "anthropic/claude-sonnet-4-6")
    thinking, redacted = kept[1].content[:2]
    assert isinstance(thinking, ThinkingBlock) and thinking.wire == THINKING
    assert isinstance(redacted, OpaqueBlock) and redacted.wire == REDACTED
    # Another model never receives them: a signature is valid only for its maker.
    other = replayable_messages(parsed.request.messages, "gemini/gemini-2.5-pro")
    assert [b.type for b in other[1].content] == ["text", "tool_use"]


def test_a_request_s_fields_map_to_the_request() -> None:
    parsed = SHAPE.parse(
        body(
            system=[
                {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "Answer in French."},
            ],
            tools=[
                {"name": "weather", "description": "d", "input_schema": {"type": "object"}},
                {"type": "web_search_20250305", "name": "web_search", "max_uses": 2},
            ],
            tool_choice={"type": "tool", "name": "weather"},
            temperature=0.5,
            top_p=0.9,
            top_k=40,
            stop_sequences=["END"],
            thinking={"type": "enabled", "budget_tokens": 2048},
            metadata={"user_id": "u-1"},
            stream=True,
        )
    )
    request = parsed.request
    assert parsed.stream is True and parsed.model == "anthropic/claude-sonnet-4-6"
    assert request.system == "Be brief.\n\nAnswer in French."
    assert request.cache is True
    assert [t.name for t in request.tools] == ["weather"]
    assert request.server_tools[0].max_uses == 2
    assert request.tool_choice == "weather"
    assert (request.temperature, request.top_p, request.top_k) == (0.5, 0.9, 40)
    assert request.stop == ["END"]
    assert request.max_tokens == 1024
    assert request.thinking is not None and request.thinking.budget_tokens == 2048


@pytest.mark.parametrize(
    ("thinking", "expected"),
    [
        ({"type": "adaptive"}, {"adaptive": True}),
        ({"type": "adaptive", "display": "omitted"}, {"adaptive": True, "display": "omitted"}),
        ({"type": "disabled"}, {"enabled": False}),
    ],
)
def test_thinking_modes(thinking: dict[str, Any], expected: dict[str, Any]) -> None:
    request = SHAPE.parse(body(thinking=thinking)).request
    assert request.thinking is not None
    assert request.thinking.model_dump(exclude_defaults=True) == expected


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"messages": [{"role": "user", "content": "x", "name": "bob"}]}, "messages.0.name"),
        ({"max_tokens": "10"}, "max_tokens"),
        ({"max_tokens": True}, "max_tokens"),
        ({"model": ""}, "model"),
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "developer", "content": "x"}]}, "messages.0.role"),
        (
            {"messages": [{"role": "system", "content": [{"type": "image"}]}]},
            "messages.0.content.0.type",
        ),
        ({"temperature": 1.5}, "temperature"),
        ({"thinking": {"type": "enabled"}}, "thinking.budget_tokens"),
        ({"tool_choice": {"type": "sometimes"}}, "tool_choice.type"),
        ({"tools": [{"type": "bash_20250124", "name": "bash"}]}, "tools.0.type"),
        (
            {"messages": [{"role": "user", "content": [{"type": "document", "source": {}}]}]},
            "messages.0.content.0.type",
        ),
        (
            {"messages": [{"role": "user", "content": [dict(THINKING)]}]},
            "messages.0.content.0",
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "image", "source": {"type": "file", "id": "f"}}],
                    }
                ]
            },
            "messages.0.content.0.source.type",
        ),
    ],
)
def test_a_field_it_cannot_read_is_a_400_naming_it(fields: dict[str, Any], param: str) -> None:
    with pytest.raises(ShapeError) as caught:
        SHAPE.parse(body(**fields))
    assert caught.value.status == 400
    assert caught.value.kind == "invalid_request_error"
    assert caught.value.message.startswith(f"{param}: ")
    assert caught.value.param == param


def test_a_tool_result_answering_no_call_is_a_400_in_words() -> None:
    messages = [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x"}]},
    ]
    with pytest.raises(ShapeError) as caught:
        SHAPE.parse(body(messages=messages))
    assert "toolu_x" in caught.value.message and caught.value.status == 400


def response(*blocks: Any, **fields: Any) -> Response:
    return Response(message=Message(role="assistant", content=list(blocks)), **fields)


def test_a_response_becomes_a_messages_api_message() -> None:
    answer = response(
        ThinkingBlock(text=THINKING["thinking"], signature=THINKING["signature"], wire=THINKING),
        ThinkingBlock(redacted=True, wire=REDACTED),
        TextBlock(text="Checking."),
        ToolUseBlock(id="toolu_1", name="weather", input={"city": "Paris"}),
        stop_reason="tool_use",
        usage=Usage(input=10, output=20, cache_read=300, cache_write=40),
        metadata={"id": "msg_01abc"},
    )
    out = SHAPE.response(answer, "fast")
    assert out == {
        "id": "msg_01abc",
        "type": "message",
        "role": "assistant",
        "model": "fast",
        "content": [
            THINKING,
            REDACTED,
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 20,
            "cache_read_input_tokens": 300,
            "cache_creation_input_tokens": 40,
        },
    }


def test_a_response_round_trips_through_a_request() -> None:
    answer = response(
        ThinkingBlock(text=THINKING["thinking"], signature=THINKING["signature"], wire=THINKING),
        TextBlock(text="Checking."),
        ToolUseBlock(id="toolu_1", name="weather", input={"city": "Paris"}),
        stop_reason="tool_use",
    )
    content = SHAPE.response(answer, "m")["content"]
    sent = body(
        messages=[
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": content},
        ]
    )
    back = SHAPE.parse(sent).request.messages[1].content
    assert [b.type for b in back] == ["thinking", "text", "tool_use"]
    assert back[0].wire == THINKING and back[2] == answer.message.content[2]


def test_thinking_another_provider_made_is_written_in_the_messages_shape() -> None:
    # A Gemini part or an OpenAI reasoning field is not a Messages block: only its
    # neutral fields are written.
    gemini = ThinkingBlock(text="Hmm.", wire={"text": "Hmm.", "thought": True})
    out = SHAPE.response(response(gemini, TextBlock(text="Hi")), "g")
    assert out["content"][0] == {"type": "thinking", "thinking": "Hmm.", "signature": ""}
    opaque = OpaqueBlock(kind="gemini_signature", wire={"thoughtSignature": "abc"})
    assert SHAPE.response(response(opaque, TextBlock(text="x")), "g")["content"] == [
        {"type": "text", "text": "x"}
    ]


@pytest.mark.parametrize(
    ("reason", "metadata", "wire"),
    [
        ("end_turn", {}, "end_turn"),
        ("end_turn", {"stop_sequence": "END"}, "stop_sequence"),
        ("max_tokens", {}, "max_tokens"),
        ("tool_use", {}, "tool_use"),
        ("refusal", {}, "refusal"),
        ("pause_turn", {}, "pause_turn"),
        ("repetition", {}, "refusal"),
        ("other", {}, "end_turn"),
    ],
)
def test_stop_reasons_map(reason: Any, metadata: dict[str, Any], wire: str) -> None:
    out = SHAPE.response(response(TextBlock(text="x"), stop_reason=reason, metadata=metadata), "m")
    assert out["stop_reason"] == wire
    assert out["stop_sequence"] == metadata.get("stop_sequence")
    assert out["id"].startswith("msg_")


def test_a_tool_call_with_broken_json_stays_readable_inside_an_object() -> None:
    out = SHAPE.response(response(ToolUseBlock(id="t", name="f", input='{"a": ')), "m")
    assert out["content"][0]["input"] == {"_raw_arguments": '{"a": '}


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (402, "billing_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
        (413, "request_too_large"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (502, "api_error"),
        (503, "overloaded_error"),
        (504, "timeout_error"),
        (529, "overloaded_error"),
        (422, "invalid_request_error"),
    ],
)
def test_error_bodies_name_anthropic_s_type_for_the_status(status: int, kind: str) -> None:
    assert SHAPE.error_body(status, "whatever", "no") == {
        "type": "error",
        "error": {"type": kind, "message": "no"},
    }


def test_an_error_body_keeps_an_anthropic_type_it_is_given() -> None:
    assert SHAPE.error_body(400, "request_too_large", "big")["error"]["type"] == "request_too_large"


def test_cost_is_not_part_of_a_non_streamed_message() -> None:
    # It travels in the x-modelplug-cost header; the body is the API's own.
    priced = response(TextBlock(text="x"), cost=Cost(amount=Decimal("0.01"), source="t"))
    assert "cost" not in str(SHAPE.response(priced, "m"))
