"""modelplug_count_tokens: models/{model}:countTokens on the Gemini API (contents for a
text, generateContentRequest for a prompt) and on Vertex AI (the parts at the top)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug_gemini.counting import CountReplyError, read_total_tokens
from modelplug_kit.testing import WireServer

WEATHER = {
    "name": "weather",
    "description": "The weather in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
COUNT_PATH = "/v1beta/models/gemini-2.5-flash:countTokens"


def answer(wire: WireServer, recorded: Callable[[str], Any]) -> None:
    wire.add_file(
        recorded("count_tokens.json"), content_type="application/json", chunk_size=1 << 16
    )


def test_modelplug_count_tokens(
    gemini_client: Any, wire_server: WireServer, recorded: Any, test_key: str
) -> None:
    answer(wire_server, recorded)
    text = "The quick brown fox jumps over the lazy dog."
    assert gemini_client().count_tokens("gemini/gemini-2.5-flash", text) == 10
    sent = wire_server.requests[-1]
    assert (sent.method, sent.path) == ("POST", COUNT_PATH)
    assert sent.headers["x-goog-api-key"] == test_key
    assert sent.json() == {"contents": [{"role": "user", "parts": [{"text": text}]}]}


def test_a_prompt_is_counted_as_a_whole_generate_content_request(
    gemini_client: Any, wire_server: WireServer, recorded: Any
) -> None:
    answer(wire_server, recorded)
    counted = gemini_client().count_prompt(
        "gemini/gemini-2.5-flash", "Hello", system="Be brief.", tools=[WEATHER]
    )
    assert counted == 10
    body = wire_server.requests[-1].json()
    request = body["generateContentRequest"]
    assert request["model"] == "models/gemini-2.5-flash"
    assert request["contents"] == [{"role": "user", "parts": [{"text": "Hello"}]}]
    assert request["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert request["tools"][0]["functionDeclarations"][0]["name"] == "weather"
    assert "generationConfig" not in request and "contents" not in body


def test_vertex_takes_the_prompt_s_parts_at_the_top(
    vertex_client: Any, wire_server: WireServer, recorded: Any
) -> None:
    client, _ = vertex_client()
    answer(wire_server, recorded)
    assert client.count_prompt("vertex/gemini-2.5-flash", "Hello", system="Be brief.") == 10
    sent = wire_server.requests[-1]
    assert sent.path == (
        "/v1/projects/proj-test/locations/europe-west4/publishers/google/models/"
        "gemini-2.5-flash:countTokens"
    )
    assert sent.json() == {
        "contents": [{"role": "user", "parts": [{"text": "Hello"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
    }


def test_a_proxy_without_the_count_path_is_none_and_not_asked_again(
    gemini_client: Any, wire_server: WireServer
) -> None:
    wire_server.add_json({"error": {"code": 404, "status": "NOT_FOUND"}}, status=404)
    client = gemini_client()
    assert client.count_tokens("gemini/gemini-2.5-flash", "a") is None
    assert client.count_tokens("gemini/gemini-2.5-flash", "b") is None
    assert len(wire_server.requests) == 1


def test_a_server_error_is_none_this_time_only(
    gemini_client: Any, wire_server: WireServer, recorded: Any
) -> None:
    wire_server.add_json({"error": {"code": 503, "status": "UNAVAILABLE"}}, status=503)
    answer(wire_server, recorded)
    client = gemini_client()
    assert client.count_tokens("gemini/gemini-2.5-flash", "a") is None
    assert client.count_tokens("gemini/gemini-2.5-flash", "a") == 10


# The first draw pays for hypothesis' own warm-up: slow on a loaded machine, not a
# slow strategy.
@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["totalTokens", "x"]),
        st.none() | st.integers() | st.text() | st.booleans() | st.floats(),
    )
)
def test_a_count_reply_is_a_count_or_a_reply_error(data: dict[str, Any]) -> None:
    try:
        counted = read_total_tokens(data)
    except CountReplyError:
        return
    assert type(counted) is int and counted >= 0
