"""modelplug_count_tokens: POST /v1/messages/count_tokens, the request the SDK's
messages.count_tokens sends; None for a text alone and a server with no count path."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug_anthropic.counting import CountReplyError, read_input_tokens
from modelplug_kit.testing import WireServer

TEST_KEY = "sk-ant-test-0123456789abcdef"  # the key conftest.claude_client sets

WEATHER = {
    "name": "weather",
    "description": "The weather in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def test_modelplug_count_tokens(
    claude_client: Any, wire_server: WireServer, recording: Any
) -> None:
    wire_server.add_file(
        recording("count_tokens.json"), content_type="application/json", chunk_size=1 << 16
    )
    client = claude_client()
    counted = client.count_prompt(
        "anthropic/claude-sonnet-4-6", "Hello", system="Be brief.", tools=[WEATHER]
    )
    assert counted == 2095
    sent = wire_server.requests[-1]
    assert (sent.method, sent.path) == ("POST", "/v1/messages/count_tokens")
    assert sent.headers["authorization"] == f"Bearer {TEST_KEY}"
    assert "anthropic-version" in sent.headers
    body = sent.json()
    assert body == {
        "model": "claude-sonnet-4-6",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}],
        "system": "Be brief.",
        "tools": [WEATHER],
    }


def test_the_request_matches_the_sdk_s_count_tokens(
    claude_client: Any, wire_server: WireServer, recording: Any
) -> None:
    import anthropic

    wire_server.add_file(
        recording("count_tokens.json"), content_type="application/json", chunk_size=1 << 16
    )
    claude_client().count_prompt("anthropic/claude-sonnet-4-6", "Hello", tools=[WEATHER])
    ours = wire_server.requests[-1]
    wire_server.add_file(
        recording("count_tokens.json"), content_type="application/json", chunk_size=1 << 16
    )
    sdk = anthropic.Anthropic(api_key=TEST_KEY, base_url=wire_server.url, max_retries=0)
    counted = sdk.messages.count_tokens(
        model="claude-sonnet-4-6",
        messages=[{"role": "user", "content": [{"type": "text", "text": "Hello"}]}],
        tools=[WEATHER],  # type: ignore[list-item]
    )
    theirs = wire_server.requests[-1]
    assert counted.input_tokens == 2095
    assert (ours.method, ours.path) == (theirs.method, theirs.path)
    assert ours.json() == theirs.json()


def test_a_text_alone_cannot_be_counted(claude_client: Any, wire_server: WireServer) -> None:
    assert claude_client().count_tokens("anthropic/claude-sonnet-4-6", "Hello") is None
    assert wire_server.requests == []


def test_a_gateway_without_the_count_path_is_none_and_not_asked_again(
    claude_client: Any, wire_server: WireServer
) -> None:
    wire_server.add_json({"error": {"type": "not_found_error", "message": "no"}}, status=404)
    client = claude_client()
    assert client.count_prompt("anthropic/claude-sonnet-4-6", "a") is None
    assert client.count_prompt("anthropic/claude-sonnet-4-6", "b") is None
    assert len(wire_server.requests) == 1


def test_an_overloaded_server_is_none_this_time_only(
    claude_client: Any, wire_server: WireServer, recording: Any
) -> None:
    wire_server.add_json({"type": "error", "error": {"type": "overloaded_error"}}, status=529)
    wire_server.add_file(
        recording("count_tokens.json"), content_type="application/json", chunk_size=1 << 16
    )
    client = claude_client()
    assert client.count_prompt("anthropic/claude-sonnet-4-6", "a") is None
    assert client.count_prompt("anthropic/claude-sonnet-4-6", "a") == 2095


# The first draw pays for hypothesis' own warm-up: slow on a loaded machine, not a
# slow strategy.
@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["input_tokens", "x"]),
        st.none() | st.integers() | st.text() | st.booleans() | st.floats(),
    )
)
def test_a_count_reply_is_a_count_or_a_reply_error(data: dict[str, Any]) -> None:
    try:
        counted = read_input_tokens(data)
    except CountReplyError:
        return
    assert type(counted) is int and counted >= 0
