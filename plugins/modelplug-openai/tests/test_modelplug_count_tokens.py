"""modelplug_count_tokens: POST /responses/input_tokens, the request the openai SDK's
responses.input_tokens.count sends; None for a text alone and a server without it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug_kit.testing import WireServer
from modelplug_openai.counting import CountReplyError, read_input_tokens

RECORDED = Path(__file__).parent / "recorded"
WEATHER = {
    "name": "weather",
    "description": "The weather in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def answer(wire: WireServer) -> None:
    wire.add_file(
        RECORDED / "input_tokens.json", content_type="application/json", chunk_size=1 << 16
    )


def test_modelplug_count_tokens(responses: Any, wire_server: WireServer) -> None:
    answer(wire_server)
    counted = responses().count_prompt("wire/gpt-5", "Hello", system="Be brief.", tools=[WEATHER])
    assert counted == 42
    sent = wire_server.requests[-1]
    assert (sent.method, sent.path) == ("POST", "/v1/responses/input_tokens")
    body = sent.json()
    assert body["model"] == "gpt-5"
    assert body["instructions"] == "Be brief."
    assert body["input"][0]["role"] == "user"
    assert body["tools"][0]["name"] == "weather"
    assert "stream" not in body and "store" not in body and "include" not in body


def test_the_request_matches_the_sdk_s_count(responses: Any, wire_server: WireServer) -> None:
    import openai

    answer(wire_server)
    responses().count_prompt("wire/gpt-5", "Hello", system="Be brief.")
    ours = wire_server.requests[-1]
    answer(wire_server)
    sdk = openai.OpenAI(api_key="sk-test", base_url=f"{wire_server.url}/v1", max_retries=0)
    counted = sdk.responses.input_tokens.count(
        model="gpt-5", input=ours.json()["input"], instructions="Be brief."
    )
    theirs = wire_server.requests[-1]
    assert counted.input_tokens == 42
    assert (ours.method, ours.path) == (theirs.method, theirs.path)
    assert {k: v for k, v in ours.json().items() if k != "reasoning"} == theirs.json()


def test_a_text_alone_cannot_be_counted(responses: Any, wire_server: WireServer) -> None:
    assert responses().count_tokens("wire/gpt-5", "Hello") is None
    assert wire_server.requests == []


def test_a_server_without_the_path_is_none_and_not_asked_again(
    responses: Any, wire_server: WireServer
) -> None:
    wire_server.add_json({"error": {"message": "Not found"}}, status=404)
    client = responses()
    assert client.count_prompt("wire/gpt-5", "a") is None
    assert client.count_prompt("wire/gpt-5", "b") is None
    assert len(wire_server.requests) == 1


def test_a_rate_limit_is_none_this_time_only(responses: Any, wire_server: WireServer) -> None:
    wire_server.add_json({"error": {"message": "slow down", "type": "rate_limit"}}, status=429)
    answer(wire_server)
    client = responses()
    assert client.count_prompt("wire/gpt-5", "a") is None
    assert client.count_prompt("wire/gpt-5", "a") == 42


# The first draw pays for hypothesis' own warm-up: slow on a loaded machine, not a
# slow strategy.
@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["input_tokens", "object"]),
        st.none() | st.integers() | st.text() | st.booleans() | st.floats(),
    )
)
def test_a_count_reply_is_a_count_or_a_reply_error(data: dict[str, Any]) -> None:
    try:
        counted = read_input_tokens(data)
    except CountReplyError:
        return
    assert type(counted) is int and counted >= 0
