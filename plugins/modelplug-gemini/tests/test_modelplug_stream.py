"""modelplug_stream: recorded Gemini streams on a real loopback socket become the right
events and the right Response."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from modelplug import Done, ModelError, TextDelta, ThinkingDelta, ToolCallStart, as_request
from modelplug.client.client import Client
from modelplug.contract.types import OpaqueBlock, TextBlock, ThinkingBlock, ToolSpec, ToolUseBlock
from modelplug_kit.testing import WireServer

WEATHER = ToolSpec(
    name="get_weather",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)


def collect(client: Client, spec: str, request: Any, **fields: Any) -> list[Any]:
    return list(client.stream(spec, request, **fields))


def test_modelplug_stream_text(
    test_key: str,
    recorded: Callable[[str], Any],
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
) -> None:
    wire_server.add_file(recorded("text.sse"))
    events = collect(gemini_client(), "gemini/gemini-2.5-flash", "Say hi in five languages")
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    response = events[-1].response
    assert isinstance(events[-1], Done)
    assert "".join(deltas) == response.text
    assert response.text.endswith("5.  **Italian:** Ciao")
    assert response.stop_reason == "end_turn"
    # promptTokenCount 5, candidates 44 + thoughts 186 (billed as output)
    assert (response.usage.input, response.usage.output, response.usage.reasoning) == (5, 230, 186)
    assert response.usage.reported is True
    assert response.model == "gemini/gemini-2.5-flash"
    assert response.metadata["served_model"] == "models/gemini-2.5-flash-preview-05-20"
    sent = wire_server.requests[0]
    assert sent.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert sent.headers["x-goog-api-key"] == test_key
    assert test_key not in sent.path
    assert sent.json()["contents"] == [
        {"role": "user", "parts": [{"text": "Say hi in five languages"}]}
    ]


def test_modelplug_stream_thinking_summary_is_display_only(
    recorded: Callable[[str], Any], gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    wire_server.add_file(recorded("thinking.sse"))
    events = collect(
        gemini_client(), "gemini/gemini-3.6-flash", "Name a pet", thinking={"effort": "low"}
    )
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thinking.startswith("**Considering the Constraint**")
    response = events[-1].response
    blocks = response.message.content
    assert isinstance(blocks[0], ThinkingBlock) and blocks[0].text == thinking
    assert blocks[0].origin == "gemini-display"  # no route has this name: never replayed
    assert isinstance(blocks[1], TextBlock) and blocks[1].text == "Scoop"
    # The signature arrived on an empty final text part: it stays with that text.
    assert isinstance(blocks[2], OpaqueBlock) and blocks[2].kind == "gemini_signature"
    assert blocks[2].wire["thoughtSignature"].startswith("Eq0JCqoJARFNMg")
    assert (response.usage.output, response.usage.reasoning) == (2 + 291, 291)
    config = wire_server.requests[0].json()["generationConfig"]["thinkingConfig"]
    assert config == {"thinkingLevel": "low", "includeThoughts": True}


def test_modelplug_stream_hidden_thinking_shows_nothing(
    recorded: Callable[[str], Any], gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    wire_server.add_file(recorded("thinking.sse"))
    events = collect(
        gemini_client(), "gemini/gemini-3.6-flash", "Name a pet", thinking={"hide": True}
    )
    assert not [e for e in events if isinstance(e, ThinkingDelta)]
    thinking = events[-1].response.message.content[0]
    assert isinstance(thinking, ThinkingBlock) and thinking.text == ""
    # Hidden thinking is not asked for (no includeThoughts), and nothing else is set.
    assert "generationConfig" not in wire_server.requests[0].json()


def test_modelplug_stream_function_call_with_signature(
    recorded: Callable[[str], Any], gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    wire_server.add_file(recorded("thinking_tool_call.sse"))
    tool = ToolSpec(name="pelican_name_generator")
    events = collect(
        gemini_client(), "gemini/gemini-2.5-flash", "Two names for a pet pelican", tools=[tool]
    )
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    response = events[-1].response
    assert response.stop_reason == "tool_use"
    [call] = response.tool_calls
    assert starts == [ToolCallStart(id=call.id, name="pelican_name_generator", index=0)]
    assert call.id.startswith("gemini_call_")  # the API gave no id
    kinds = [b.type for b in response.message.content]
    assert kinds == ["thinking", "tool_use", "opaque"]
    assert response.metadata["finish_message"] == "Model generated function call(s)."
    declarations = wire_server.requests[0].json()["tools"][0]["functionDeclarations"]
    assert declarations == [{"name": "pelican_name_generator"}]


def test_modelplug_stream_parallel_calls_keep_the_first_signature_on_the_first_call(
    recorded: Callable[[str], Any], gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    wire_server.add_file(recorded("parallel_calls.sse"))
    events = collect(
        gemini_client(),
        "gemini/gemini-3-flash-preview",
        "Weather in Paris and London?",
        tools=[WEATHER],
    )
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    content = events[-1].response.message.content
    assert [b.type for b in content] == ["tool_use", "opaque", "tool_use"]
    first, signature, second = content
    assert isinstance(first, ToolUseBlock) and first.input == {"city": "Paris"}
    assert isinstance(second, ToolUseBlock) and second.input == {"city": "London"}
    assert first.id != second.id
    assert [s.id for s in starts] == [first.id, second.id]
    assert [s.index for s in starts] == [0, 1]
    assert isinstance(signature, OpaqueBlock) and signature.wire["thoughtSignature"].startswith(
        "Et0B"
    )


def test_modelplug_stream_grounding_gives_citations_and_sources(
    recorded: Callable[[str], Any], gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    wire_server.add_file(recorded("grounding.sse"))
    events = collect(
        gemini_client(),
        "gemini/gemini-2.5-flash",
        "Who won Euro 2024?",
        server_tools=[{"type": "web_search"}],
    )
    response = events[-1].response
    text, sources = response.message.content
    assert isinstance(text, TextBlock)
    assert text.text == "Spain won Euro 2024, defeating England 2-1 in the final."
    assert text.citations is not None and len(text.citations) == 2
    assert text.citations[1]["sources"] == [
        {
            "uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AAA",
            "title": "aljazeera.com",
        },
        {
            "uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/BBB",
            "title": "uefa.com",
        },
    ]
    assert isinstance(sources, OpaqueBlock) and sources.kind == "gemini_grounding"
    assert sources.text is not None and "uefa.com: https://" in sources.text
    assert sources.wire["webSearchQueries"] == ["UEFA Euro 2024 winner", "Euro 2024 final score"]
    # toolUsePromptTokenCount is input; a 2.5 model is billed per grounded prompt.
    assert (response.usage.input, response.usage.web_searches) == (12 + 90, 1)
    assert wire_server.requests[0].json()["tools"] == [{"googleSearch": {}}]
    # From Gemini 3 on, every search query is billed.
    wire_server.add_file(recorded("grounding.sse"))
    events = collect(
        gemini_client(),
        "gemini/gemini-3-flash-preview",
        "Who won?",
        server_tools=[{"type": "web_search"}],
    )
    assert events[-1].response.usage.web_searches == 2


def test_modelplug_stream_max_tokens(
    recorded: Callable[[str], Any], gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    wire_server.add_file(recorded("max_tokens.sse"))
    events = collect(gemini_client(), "gemini/gemini-2.5-flash", "A story", max_tokens=10)
    response = events[-1].response
    assert response.stop_reason == "max_tokens"
    assert response.text == "Once upon a time, in a land far away"
    assert wire_server.requests[0].json()["generationConfig"] == {"maxOutputTokens": 10}


def test_modelplug_stream_safety_is_a_refusal_keeping_the_text(
    recorded: Callable[[str], Any], gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    wire_server.add_file(recorded("safety.sse"))
    events = collect(gemini_client(), "gemini/gemini-2.5-flash", "How do I ...")
    response = events[-1].response
    assert response.stop_reason == "refusal"
    assert response.text == "Here is how"
    assert response.metadata["finish_reason"] == "SAFETY"
    assert response.metadata["safety_ratings"][0]["blocked"] is True


def test_modelplug_stream_blocked_prompt_is_a_refusal_with_the_reason(
    recorded: Callable[[str], Any], gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    wire_server.add_file(recorded("blocked_prompt.sse"))
    events = collect(gemini_client(), "gemini/gemini-2.5-flash", "something blocked")
    response = events[-1].response
    assert response.stop_reason == "refusal"
    assert response.metadata["block_reason"] == "PROHIBITED_CONTENT"
    assert response.message.content == []
    assert response.usage.input == 14


def test_modelplug_stream_malformed_function_call_is_a_classified_error(
    recorded: Callable[[str], Any], gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    wire_server.add_file(recorded("malformed_call.sse"))
    with pytest.raises(ModelError) as caught:
        collect(gemini_client(), "gemini/gemini-2.5-flash", "weather?", tools=[WEATHER])
    error = caught.value
    assert "MALFORMED_FUNCTION_CALL" in str(error)
    assert error.error_class.reason == "malformed function call"
    assert error.error_class.retryable is True
    assert error.partial is not None and error.partial.text == "Let me check."


def test_modelplug_stream_cut_stream_is_transient_with_the_partial_output(
    recorded: Callable[[str], Any], gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    wire_server.add_file(recorded("text.sse"), drop_after=1)
    with pytest.raises(ModelError) as caught:
        collect(gemini_client(), "gemini/gemini-2.5-flash", "Say hi")
    error = caught.value
    assert error.kind == "transient" and error.retryable
    assert error.partial is not None
    assert error.partial.text.startswith("Here you go!")
    assert error.partial.usage.reported is False


def test_modelplug_stream_that_ends_without_finish_reason_is_transient(
    recorded: Callable[[str], Any], gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    data = recorded("text.sse").read_bytes().split(b"\n", 1)[1]
    first_event = data.split(b"\r\n\r\n")[0] + b"\r\n\r\n"
    wire_server.add([first_event])
    with pytest.raises(ModelError) as caught:
        collect(gemini_client(), "gemini/gemini-2.5-flash", "Say hi")
    assert caught.value.kind == "transient"
    assert "no finishReason" in str(caught.value)
    assert caught.value.partial is not None and "Bonjour" in caught.value.partial.text


def test_modelplug_stream_missing_key_fails_before_sending(
    gemini_client: Callable[..., Client], wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = gemini_client()
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(Exception, match="Set GEMINI_API_KEY to use the provider gemini"):
        collect(client, "gemini/gemini-2.5-flash", "hi")
    assert wire_server.requests == []


def test_modelplug_stream_google_api_key_is_the_second_choice(
    recorded: Callable[[str], Any],
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = gemini_client()
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", "AIzaSy-second-choice-key-0123")
    wire_server.add_file(recorded("text.sse"))
    collect(client, "gemini/gemini-2.5-flash", "hi")
    assert wire_server.requests[0].headers["x-goog-api-key"] == "AIzaSy-second-choice-key-0123"


def test_modelplug_stream_sync_facade(
    recorded: Callable[[str], Any], gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    wire_server.add_file(recorded("tool_answer.sse"))
    response = gemini_client().complete("gemini/gemini-3-flash-preview", as_request("5 times 3?"))
    assert response.text == "5 times 3 is 15."
    assert (response.usage.input, response.usage.output) == (121, 9)


def test_modelplug_stream_finish_reason_beside_text_without_an_index(
    gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    # Vertex AI leaves "index" out: a text event that also finishes must not be taken
    # for a plain continuation.
    text = {"candidates": [{"content": {"parts": [{"text": "Hello"}], "role": "model"}}]}
    last = {
        "candidates": [
            {
                "content": {"parts": [{"text": " there"}], "role": "model"},
                "finishReason": "MAX_TOKENS",
            }
        ],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2},
    }
    wire_server.add_sse([text, last])
    response = gemini_client().complete("gemini/gemini-2.5-flash", "hi")
    assert (response.text, response.stop_reason) == ("Hello there", "max_tokens")
    assert response.usage.output == 2
