"""The pure mapping functions: to_wire_params, to_wire_messages, to_wire_tools,
from_wire_message."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplug import Client, RequestError
from modelplug.contract.types import (
    Endpoint,
    ImageBlock,
    Message,
    ModelInfo,
    OpaqueBlock,
    Request,
    Response,
    Route,
    ServerTool,
    TextBlock,
    ThinkingBlock,
    ThinkingRequest,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from modelplug_anthropic.mapping import (
    DEFAULT_MAX_TOKENS,
    from_wire_message,
    to_wire_messages,
    to_wire_params,
    to_wire_tools,
)
from modelplug_anthropic.routes import thinking_mode
from modelplug_kit.testing import WireServer, load_recording

Recording = Callable[[str], Path]
MARK = {"type": "ephemeral"}


def route(model: str = "claude-opus-5", provider: str = "anthropic", **info: Any) -> Route:
    return Route(
        provider=provider,
        model=model,
        endpoint=Endpoint(type="anthropic"),
        info=ModelInfo(thinking=thinking_mode(model), **info),
    )


def compact(value: Any) -> bytes:
    """JSON as the SDK sends it: compact separators, UTF-8 kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def block_bytes(data: bytes, start: bytes) -> bytes:
    """The exact bytes of the JSON object in ``data`` that starts with ``start``."""
    text = data.decode()
    offset = text.index(start.decode())
    _, end = json.JSONDecoder().raw_decode(text, offset)
    return text[offset:end].encode()


# ----------------------------------------------------------------- thinking, bytes


def round_trip_request(recorded: bytes, spec: str = "anthropic/claude-opus-5") -> Request:
    """recording -> from_wire_message -> types -> JSON -> types -> a follow-up request."""
    response = from_wire_message(json.loads(recorded), spec)
    stored = Response.model_validate_json(response.model_dump_json())
    return Request(
        messages=[
            Message(role="user", content="Weather in Paris?"),
            stored.message,
            Message(
                role="user",
                content=[ToolResultBlock(tool_use_id="toolu_01RoundTrip", content="18C, cloudy")],
            ),
        ],
        tools=[ToolSpec(name="get_weather")],
    )


def test_thinking_blocks_go_back_byte_for_byte(recording: Recording) -> None:
    recorded = load_recording(recording("thinking_message.json"))
    request = round_trip_request(recorded)
    sent = to_wire_messages(request.messages, route())
    thinking, redacted = sent[1]["content"][0], sent[1]["content"][1]
    assert compact(thinking) == block_bytes(recorded, b'{"type":"thinking"')
    assert compact(redacted) == block_bytes(recorded, b'{"type":"redacted_thinking"')


def test_thinking_blocks_reach_the_wire_byte_for_byte(
    recording: Recording,
    claude_client: Callable[..., Client],
    wire_server: WireServer,
) -> None:
    recorded = load_recording(recording("thinking_message.json"))
    wire_server.add_file(recording("text.sse"))
    claude_client().complete("anthropic/claude-opus-5", round_trip_request(recorded))
    body = wire_server.requests[0].body
    assert block_bytes(recorded, b'{"type":"thinking"') in body
    assert block_bytes(recorded, b'{"type":"redacted_thinking"') in body


def test_thinking_is_left_out_for_another_model(recording: Recording) -> None:
    recorded = load_recording(recording("thinking_message.json"))
    request = round_trip_request(recorded)
    sent = to_wire_messages(request.messages, route("claude-sonnet-5"))
    assert [b["type"] for b in sent[1]["content"]] == ["tool_use"]
    # The batch preset runs the same model: its blocks go back.
    batch = to_wire_messages(request.messages, route(provider="anthropic-batch"))
    assert [b["type"] for b in batch[1]["content"]] == ["thinking", "redacted_thinking", "tool_use"]


def test_a_thinking_only_answer_from_another_model_is_dropped() -> None:
    messages = [
        Message(role="user", content="hi"),
        Message(
            role="assistant",
            content=[ThinkingBlock(text="hm", signature="sig", wire={"type": "thinking"})],
            model="openrouter/x",
        ),
        Message(role="user", content="again"),
    ]
    sent = to_wire_messages(messages, route(), cache=False)
    assert [m["role"] for m in sent] == ["user", "user"]


def test_foreign_citations_and_opaque_blocks_stay_home() -> None:
    message = Message(
        role="assistant",
        content=[
            TextBlock(text="cited", citations=[{"type": "url_citation", "url": "u"}]),
            OpaqueBlock(kind="reasoning", wire={"type": "reasoning", "encrypted": "x"}),
        ],
        model="openai/gpt-5",
    )
    sent = to_wire_messages([Message(role="user", content="q"), message], route(), cache=False)
    assert sent[1]["content"] == [{"type": "text", "text": "cited"}]


def test_cache_mark_skips_thinking_and_never_touches_the_stored_block() -> None:
    wire = {"type": "thinking", "thinking": "t", "signature": "s"}
    last = Message(
        role="assistant",
        content=[TextBlock(text="answer"), ThinkingBlock(text="t", signature="s", wire=wire)],
        model="anthropic/claude-opus-5",
    )
    sent = to_wire_messages([Message(role="user", content="q"), last], route())
    assert sent[1]["content"][0] == {"type": "text", "text": "answer", "cache_control": MARK}
    assert sent[1]["content"][1] == wire
    assert wire == {"type": "thinking", "thinking": "t", "signature": "s"}
    assert "cache_control" not in sent[0]["content"][0]


# ----------------------------------------------------------------------- thinking


@pytest.mark.parametrize(
    ("model", "thinking", "expected", "min_tokens"),
    [
        # A model that always thinks gets room even with no choice, and never `disabled`.
        ("claude-opus-5", None, {}, 16_384),
        ("claude-fable-5-1", ThinkingRequest(enabled=False), {}, 16_384),
        (
            "claude-sonnet-4-6",
            ThinkingRequest(enabled=False),
            {"thinking": {"type": "disabled"}},
            0,
        ),
        # A display alone never turns thinking on for an optional model.
        ("claude-sonnet-4-6", ThinkingRequest(display="summarized"), {}, 0),
        (
            "claude-opus-5",
            ThinkingRequest(display="omitted"),
            {"thinking": {"type": "adaptive", "display": "omitted"}},
            16_384,
        ),
        (
            "claude-opus-4-8",
            ThinkingRequest(adaptive=True, display="summarized"),
            {"thinking": {"type": "adaptive", "display": "summarized"}},
            16_384,
        ),
        ("claude-opus-4-7", ThinkingRequest(), {"thinking": {"type": "adaptive"}}, 16_384),
        (
            "claude-opus-5",
            ThinkingRequest(effort="xhigh"),
            {"output_config": {"effort": "xhigh"}},
            32_000,
        ),
        (
            "claude-opus-5",
            ThinkingRequest(effort="max"),
            {"output_config": {"effort": "max"}},
            32_000,
        ),
        # 4.6 has no xhigh; minimal is the API's low.
        (
            "claude-sonnet-4-6",
            ThinkingRequest(effort="xhigh"),
            {"output_config": {"effort": "high"}},
            0,
        ),
        (
            "claude-opus-5",
            ThinkingRequest(effort="minimal"),
            {"output_config": {"effort": "low"}},
            16_384,
        ),
        (
            "claude-opus-4-6",
            ThinkingRequest(budget_tokens=20_000),
            {"thinking": {"type": "enabled", "budget_tokens": 20_000}},
            20_001,
        ),
    ],
)
def test_to_wire_params_maps_thinking(
    model: str, thinking: ThinkingRequest | None, expected: dict[str, Any], min_tokens: int
) -> None:
    # No max_tokens from the caller: the plugin's own leaves room for the thinking.
    params = to_wire_params(
        Request(messages=[Message(role="user", content="q")], thinking=thinking), route(model)
    )
    got = {k: params[k] for k in ("thinking", "output_config") if k in params}
    assert got == expected
    assert params["max_tokens"] >= max(min_tokens, DEFAULT_MAX_TOKENS)
    if min_tokens == 0:
        assert params["max_tokens"] == DEFAULT_MAX_TOKENS


@pytest.mark.parametrize(
    "thinking",
    [
        None,
        ThinkingRequest(),
        ThinkingRequest(effort="max"),
        ThinkingRequest(adaptive=True),
        ThinkingRequest(budget_tokens=500),
        ThinkingRequest(budget_tokens=20_000),
    ],
)
@pytest.mark.parametrize("model", ["claude-opus-5", "claude-opus-4-6", "claude-3-7-sonnet"])
def test_the_caller_s_max_tokens_is_never_raised(
    model: str, thinking: ThinkingRequest | None
) -> None:
    for max_tokens in (300, 1000, 4000):
        ask = Request(
            messages=[Message(role="user", content="q")], thinking=thinking, max_tokens=max_tokens
        )
        params = to_wire_params(ask, route(model))
        assert params["max_tokens"] == max_tokens
        budget = params.get("thinking", {}).get("budget_tokens")
        if budget is not None:
            assert 1024 <= budget < max_tokens


def test_thinking_floor_respects_a_larger_request_and_the_model_limit() -> None:
    ask = Request(messages=[Message(role="user", content="q")], max_tokens=50_000)
    assert to_wire_params(ask, route())["max_tokens"] == 50_000
    small = route(max_output_tokens=20_000)
    high = ask.model_copy(update={"max_tokens": None, "thinking": ThinkingRequest(effort="max")})
    assert to_wire_params(high, small)["max_tokens"] == 20_000


# ----------------------------------------------------------------- other fields


def test_to_wire_params_maps_the_other_fields() -> None:
    request = Request(
        system="sys",
        messages=[Message(role="user", content="q")],
        tools=[ToolSpec(name="a", description="does a")],
        tool_choice="a",
        stop=["END"],
        temperature=0.2,
        extra={"metadata": {"user_id": "u1"}},
    )
    params = to_wire_params(request, route("claude-sonnet-4-6"), cache=False)
    assert params["system"] == "sys"
    assert params["tools"] == [
        {"name": "a", "input_schema": {"type": "object", "properties": {}}, "description": "does a"}
    ]
    assert params["tool_choice"] == {"type": "tool", "name": "a"}
    assert params["stop_sequences"] == ["END"]
    assert params["temperature"] == 0.2
    assert params["metadata"] == {"user_id": "u1"}
    assert "thinking" not in params


def test_to_wire_tools_puts_server_tools_last_and_marks_the_last() -> None:
    tools = to_wire_tools(
        [ToolSpec(name="a"), ToolSpec(name="b")],
        [ServerTool(blocked_domains=["bad.example"])],
    )
    assert [t.get("name") for t in tools] == ["a", "b", "web_search"]
    assert tools[2]["type"] == "web_search_20250305"
    assert tools[2]["blocked_domains"] == ["bad.example"]
    assert [("cache_control" in t) for t in tools] == [False, False, True]
    assert all("cache_control" not in t for t in to_wire_tools([ToolSpec(name="a")], cache=False))


def test_images_in_user_messages_and_tool_results_and_is_error() -> None:
    messages = [
        Message(
            role="user",
            content=[
                TextBlock(text="look"),
                ImageBlock(media_type="image/png", data="iVBORw0KGgo="),
                ImageBlock(url="https://example.com/cat.jpg"),
            ],
        ),
        Message(role="assistant", content=[ToolUseBlock(id="t1", name="shot", input={})]),
        Message(
            role="user",
            content=[
                ToolResultBlock(
                    tool_use_id="t1",
                    content=[
                        TextBlock(text="failed"),
                        ImageBlock(media_type="image/jpeg", data="/9j/"),
                    ],
                    is_error=True,
                )
            ],
        ),
    ]
    sent = to_wire_messages(messages, route(), cache=False)
    assert sent[0]["content"][1:] == [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
        },
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
    ]
    assert sent[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "t1",
            "content": [
                {"type": "text", "text": "failed"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"},
                },
            ],
            "is_error": True,
        }
    ]


@pytest.mark.parametrize(
    ("wire", "neutral"),
    [
        ("end_turn", "end_turn"),
        ("stop_sequence", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("model_context_window_exceeded", "max_tokens"),
        ("pause_turn", "pause_turn"),
        ("refusal", "refusal"),
        (None, "other"),
    ],
)
def test_from_wire_message_maps_stop_reasons(wire: str | None, neutral: str) -> None:
    message: dict[str, Any] = {
        "content": [],
        "stop_reason": wire,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    assert from_wire_message(message, "anthropic/claude-opus-5").stop_reason == neutral


def test_from_wire_message_maps_usage() -> None:
    usage = {
        "input_tokens": 7,
        "output_tokens": 90,
        "cache_read_input_tokens": 1000,
        "cache_creation_input_tokens": 200,
        "output_tokens_details": {"thinking_tokens": 50},
        "server_tool_use": {"web_search_requests": 3, "web_fetch_requests": 0},
    }
    got = from_wire_message({"content": [], "usage": usage}, "anthropic/m").usage
    assert (got.input, got.output, got.cache_read, got.cache_write) == (7, 90, 1000, 200)
    assert (got.reasoning, got.web_searches, got.reported) == (50, 3, True)
    assert from_wire_message({"content": []}, "anthropic/m").usage.reported is False


# ------------------------------------------------------------------- properties

_text = st.text(min_size=1, max_size=40)
_blocks = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _text),
    st.builds(
        lambda t, s: {"type": "thinking", "thinking": t, "signature": s},
        st.text(max_size=40),
        _text,
    ),
    st.builds(lambda d: {"type": "redacted_thinking", "data": d}, _text),
    st.builds(
        lambda i, n, v: {"type": "tool_use", "id": i, "name": n, "input": v},
        _text,
        _text,
        st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=8), max_size=3),
    ),
    st.builds(
        lambda i, q: {
            "type": "server_tool_use",
            "id": i,
            "name": "web_search",
            "input": {"query": q},
        },
        _text,
        _text,
    ),
)


@given(st.lists(_blocks, max_size=6))
def test_an_assistant_message_round_trips_through_the_neutral_types(
    content: list[dict[str, Any]],
) -> None:
    wire = {
        "content": content,
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 2},
    }
    response = from_wire_message(wire, "anthropic/claude-opus-5")
    stored = Response.model_validate_json(response.model_dump_json())
    sent = to_wire_messages([stored.message], route(), cache=False)
    assert (sent[0]["content"] if sent else []) == content


@given(
    st.integers(0, 10**7),
    st.integers(0, 10**7),
    st.integers(0, 10**7),
    st.integers(0, 10**7),
)
def test_usage_counts_are_taken_as_reported(inp: int, out: int, read: int, write: int) -> None:
    usage = {
        "input_tokens": inp,
        "output_tokens": out,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
    }
    got = from_wire_message({"content": [], "usage": usage}, "anthropic/m").usage
    assert got.total_input == inp + read + write
    assert got.output == out


def test_a_thinking_budget_never_pushes_max_tokens_past_the_model_limit() -> None:
    ask = Request(
        messages=[Message(role="user", content="q")],
        thinking=ThinkingRequest(budget_tokens=60_000),
    )
    assert (
        to_wire_params(ask, route("claude-opus-4-6", max_output_tokens=64_000))["max_tokens"]
        == 64_000
    )
    too_big = ask.model_copy(update={"thinking": ThinkingRequest(budget_tokens=64_000)})
    with pytest.raises(RequestError, match="budget_tokens 64000 leaves no room"):
        to_wire_params(too_big, route("claude-opus-4-6", max_output_tokens=64_000))
