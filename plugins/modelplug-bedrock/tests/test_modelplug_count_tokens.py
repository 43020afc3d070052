"""modelplug_count_tokens: Bedrock's CountTokens (POST /model/{id}/count-tokens, the
Converse parts under input.converse), signed as a Converse call; None for a text alone
and a 404."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug_bedrock.counting import CountReplyError, read_input_tokens

MODEL = "anthropic.claude-sonnet-4-6-v1:0"
PATH = "/model/anthropic.claude-sonnet-4-6-v1%3A0/count-tokens"
WEATHER = {
    "name": "weather",
    "description": "The weather in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def answer(wire_server: Any, count: int = 17) -> None:
    # Shape: botocore's bedrock-runtime service model, CountTokensResponse (inputTokens);
    # the count is invented.
    wire_server.add(json.dumps({"inputTokens": count}), content_type="application/json")


def test_modelplug_count_tokens(client: Any, wire_server: Any) -> None:
    answer(wire_server)
    counted = client().count_prompt(
        f"bedrock/{MODEL}", "Hello", system="Be brief.", tools=[WEATHER]
    )
    assert counted == 17
    sent = wire_server.requests[-1]
    assert (sent.method, sent.path) == ("POST", PATH)
    assert sent.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    converse = sent.json()["input"]["converse"]
    assert converse["messages"] == [{"role": "user", "content": [{"text": "Hello"}]}]
    assert converse["system"] == [{"text": "Be brief."}]
    assert converse["toolConfig"]["tools"][0]["toolSpec"]["name"] == "weather"
    assert set(sent.json()) == {"input"}


def test_a_bearer_key_is_sent_instead_of_a_signature(client: Any, wire_server: Any) -> None:
    answer(wire_server)
    environ = {"AWS_BEARER_TOKEN_BEDROCK": "ABSKtest0123456789"}
    assert client(environ=environ).count_prompt(f"bedrock/{MODEL}", "Hi") == 17
    assert wire_server.requests[-1].headers["authorization"] == "Bearer ABSKtest0123456789"


def test_a_text_alone_cannot_be_counted(client: Any, wire_server: Any) -> None:
    assert client().count_tokens(f"bedrock/{MODEL}", "Hello") is None
    assert wire_server.requests == []


def test_a_model_it_does_not_count_is_none_and_asked_again(client: Any, wire_server: Any) -> None:
    refusal = {"message": "The provided model doesn't support counting tokens."}
    wire_server.add(
        json.dumps(refusal),
        status=400,
        content_type="application/json",
        headers={"x-amzn-errortype": "ValidationException"},
    )
    answer(wire_server, 5)
    made = client()
    assert made.count_prompt(f"bedrock/{MODEL}", "a") is None
    assert made.count_prompt(f"bedrock/{MODEL}", "a") == 5


def test_a_404_is_none_and_not_asked_again(client: Any, wire_server: Any) -> None:
    wire_server.add(json.dumps({"message": "no"}), status=404, content_type="application/json")
    made = client()
    assert made.count_prompt(f"bedrock/{MODEL}", "a") is None
    assert made.count_prompt(f"bedrock/{MODEL}", "b") is None
    assert len(wire_server.requests) == 1


# The first draw pays for hypothesis' own warm-up: slow on a loaded machine, not a
# slow strategy.
@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["inputTokens", "x"]),
        st.none() | st.integers() | st.text() | st.booleans() | st.floats(),
    )
)
def test_a_count_reply_is_a_count_or_a_reply_error(data: dict[str, Any]) -> None:
    try:
        counted = read_input_tokens(data)
    except CountReplyError:
        return
    assert type(counted) is int and counted >= 0
