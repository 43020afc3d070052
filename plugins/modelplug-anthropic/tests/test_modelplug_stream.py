"""modelplug_stream for `anthropic`: recorded SSE bytes through the real loopback server
and the kit's HTTP path."""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from modelplug import Client, MissingKeyError, ModelError, as_request
from modelplug.contract.types import (
    Done,
    Message,
    OpaqueBlock,
    Request,
    ServerTool,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ThinkingRequest,
    ToolCallStart,
    ToolSpec,
    ToolUseBlock,
)
from modelplug_anthropic import sdk as sdk_module
from modelplug_anthropic.http import HTTP
from modelplug_kit.testing import WireServer

MakeClient = Callable[..., Client]
Recording = Callable[[str], Path]


def events_of(client: Client, spec: str, request: object, **fields: object) -> list[object]:
    return list(client.stream(spec, request, **fields))


def done_of(events: list[object]) -> Done:
    dones = [e for e in events if isinstance(e, Done)]
    assert len(dones) == 1
    assert events[-1] is dones[0]
    return dones[0]


def test_modelplug_stream_text_deltas_then_done_with_usage(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("text.sse"))
    events = events_of(claude_client(), "anthropic/claude-sonnet-4-6", "Say hello")
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", ", world!"]
    response = done_of(events).response
    assert response.text == "Hello, world!"
    assert response.model == "anthropic/claude-sonnet-4-6"
    assert response.message.model == "anthropic/claude-sonnet-4-6"
    assert response.stop_reason == "end_turn"
    usage = response.usage
    assert (usage.input, usage.cache_write, usage.cache_read, usage.output) == (25, 10, 100, 15)
    sent = wire_server.requests[0]
    assert sent.path == "/v1/messages"
    body = sent.json()
    assert body["stream"] is True
    assert body["model"] == "claude-sonnet-4-6"
    assert sent.headers["authorization"] == "Bearer sk-ant-test-0123456789abcdef"
    assert sent.headers["accept"] == "text/event-stream"
    assert len(wire_server.requests) == 1


def test_modelplug_stream_bare_claude_id_uses_anthropic(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("text.sse"))
    response = claude_client().complete("claude-sonnet-4-6", "hi")
    assert response.model == "anthropic/claude-sonnet-4-6"
    assert wire_server.requests[0].json()["model"] == "claude-sonnet-4-6"


def test_modelplug_stream_thinking_deltas_and_signature(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("thinking.sse"))
    events = events_of(
        claude_client(),
        "anthropic/claude-opus-5",
        "2+2?",
        thinking=ThinkingRequest(display="summarized"),
    )
    thought = [e.text for e in events if isinstance(e, ThinkingDelta)]
    assert thought == ["Let me add these. ", "2 + 2 = 4."]
    response = done_of(events).response
    block = response.message.content[0]
    assert isinstance(block, ThinkingBlock)
    assert block.text == "Let me add these. 2 + 2 = 4."
    assert block.signature and block.signature.startswith("EqQBCgIYAh")
    assert block.wire == {
        "type": "thinking",
        "thinking": "Let me add these. 2 + 2 = 4.",
        "signature": block.signature,
    }
    assert response.usage.reasoning == 45
    assert response.usage.output == 60
    body = wire_server.requests[0].json()
    # Opus 5 always thinks: display maps to adaptive, and max_tokens has room.
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["max_tokens"] >= 16_384


def test_modelplug_stream_hidden_thinking_sends_no_deltas_but_keeps_wire(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("thinking.sse"))
    events = events_of(
        claude_client(), "anthropic/claude-opus-5", "2+2?", thinking=ThinkingRequest(hide=True)
    )
    assert not [e for e in events if isinstance(e, ThinkingDelta)]
    block = done_of(events).response.message.content[0]
    assert isinstance(block, ThinkingBlock)
    assert block.text == ""
    assert block.wire is not None and block.wire["thinking"] == "Let me add these. 2 + 2 = 4."


def test_modelplug_stream_redacted_thinking_becomes_a_redacted_block(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("redacted_thinking.sse"))
    response = claude_client().complete("anthropic/claude-opus-5", "hi")
    block = response.message.content[0]
    assert isinstance(block, ThinkingBlock)
    assert block.redacted is True and block.text == ""
    assert block.wire is not None
    assert block.wire["type"] == "redacted_thinking"
    assert block.wire["data"].startswith("EmwKAhgBEgy3va3pzix")
    assert response.text == "Done."


def test_modelplug_stream_tool_use_starts_a_call_and_done_has_parsed_input(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("tool_use.sse"))
    weather = ToolSpec(
        name="get_weather",
        description="Weather for a place",
        input_schema={"type": "object", "properties": {"location": {"type": "string"}}},
    )
    events = events_of(
        claude_client(), "anthropic/claude-sonnet-4-6", "Weather in SF?", tools=[weather]
    )
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.id, s.name, s.index) for s in starts] == [
        ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", 1)
    ]
    # The call starts after the text before it and before Done.
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("ToolCallStart") > kinds.index("TextDelta")
    response = done_of(events).response
    assert response.stop_reason == "tool_use"
    (call,) = response.tool_calls
    assert call.input == {"location": "San Francisco, CA", "unit": "fahrenheit"}
    body = wire_server.requests[0].json()
    assert body["tools"][-1]["name"] == "get_weather"
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}


def test_modelplug_stream_web_search_keeps_server_blocks_citations_and_counts(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("web_search.sse"))
    response = claude_client().complete(
        "anthropic/claude-sonnet-4-6",
        "Weather in NYC?",
        server_tools=[ServerTool(max_uses=2, allowed_domains=["weather.example.com"])],
    )
    kinds = [type(b).__name__ for b in response.message.content]
    assert kinds == ["TextBlock", "OpaqueBlock", "OpaqueBlock", "TextBlock"]
    use, result = response.message.content[1], response.message.content[2]
    assert isinstance(use, OpaqueBlock) and isinstance(result, OpaqueBlock)
    assert use.kind == "server_tool_use"
    assert use.wire["input"] == {"query": "weather NYC today"}
    assert result.kind == "web_search_tool_result"
    assert result.wire["content"][0]["encrypted_content"] == "Ev0DCioIAxgCIiQ3NmU4ZmI4OC1k"
    assert result.text is not None and "https://weather.example.com/nyc" in result.text
    cited = response.message.content[3]
    assert isinstance(cited, TextBlock)
    assert cited.citations is not None
    assert cited.citations[0]["encrypted_index"] == "Eo8BCioIAhgBIiQyYjQ0OWJmZi1l"
    # message_delta's cumulative counts overwrite message_start's.
    assert response.usage.input == 10682
    assert response.usage.output == 510
    assert response.usage.web_searches == 1
    tools = wire_server.requests[0].json()["tools"]
    assert tools == [
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": 2,
            "allowed_domains": ["weather.example.com"],
            "cache_control": {"type": "ephemeral"},
        }
    ]


def test_modelplug_stream_pause_turn_goes_back_unchanged(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("pause_turn.sse"))
    wire_server.add_file(recording("text.sse"))
    client = claude_client()
    first = client.complete(
        "anthropic/claude-sonnet-4-6", "Search modelplug", server_tools=[ServerTool()]
    )
    assert first.stop_reason == "pause_turn"
    assert first.usage.web_searches == 1
    request = Request(
        messages=[Message(role="user", content="Search modelplug"), first.message],
        server_tools=[ServerTool()],
        cache=False,
    )
    client.complete("anthropic/claude-sonnet-4-6", request)
    resent = wire_server.requests[1].json()["messages"][1]
    assert resent == {
        "role": "assistant",
        "content": [
            {
                "type": "server_tool_use",
                "id": "srvtoolu_01PauseA",
                "name": "web_search",
                "input": {"query": "modelplug"},
            }
        ],
    }


def test_modelplug_stream_overloaded_error_mid_stream_keeps_partial_text(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("overloaded_midstream.sse"))
    client = claude_client()
    seen: list[str] = []
    with pytest.raises(ModelError) as caught:
        for event in client.stream("anthropic/claude-sonnet-4-6", "Tell a story"):
            if isinstance(event, TextDelta):
                seen.append(event.text)
    assert seen == ["Once upon a time"]
    error = caught.value
    assert error.kind == "overloaded"
    assert error.error_class.retryable and error.error_class.fallback
    assert error.partial is not None
    assert error.partial.text == "Once upon a time"
    assert error.partial.stop_reason == "other"
    assert error.partial.model == "anthropic/claude-sonnet-4-6"


def test_modelplug_stream_sends_replayed_thinking_and_tool_results(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("thinking.sse"))
    wire_server.add_file(recording("text.sse"))
    client = claude_client()
    first = client.complete("anthropic/claude-opus-5", "2+2?")
    call = ToolUseBlock(id="toolu_1", name="calc", input={"x": 1})
    assistant = first.message.model_copy(update={"content": [*first.message.content, call]})
    request = Request(
        messages=[
            Message(role="user", content="2+2?"),
            assistant,
            Message(
                role="user",
                content=[{"type": "tool_result", "tool_use_id": "toolu_1", "content": "4"}],
            ),
        ],
        tools=[ToolSpec(name="calc")],
    )
    client.complete("anthropic/claude-opus-5", request)
    sent = wire_server.requests[1].json()["messages"]
    thinking = first.message.content[0]
    assert isinstance(thinking, ThinkingBlock)
    assert sent[1]["content"][0] == thinking.wire
    assert sent[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [{"type": "text", "text": "4"}],
            "cache_control": {"type": "ephemeral"},
        }
    ]


def test_modelplug_stream_cache_breakpoints_on_by_default(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("text.sse"))
    claude_client().complete(
        "anthropic/claude-sonnet-4-6", "hi", system="Be brief.", tools=[ToolSpec(name="a")]
    )
    body = wire_server.requests[0].json()
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_modelplug_stream_cache_off_per_request(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("text.sse"))
    claude_client().complete(
        "anthropic/claude-sonnet-4-6",
        "hi",
        system="Be brief.",
        tools=[ToolSpec(name="a")],
        cache=False,
        temperature=0.3,
    )
    raw = wire_server.requests[0].body.decode()
    assert "cache_control" not in raw
    body = json.loads(raw)
    assert body["system"] == "Be brief."
    # Fields messages.stream has no argument for still reach the body.
    assert body["temperature"] == 0.3


def test_modelplug_stream_cache_off_in_settings(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("text.sse"))
    wire_server.add_file(recording("text.sse"))
    with warnings.catch_warnings():
        # Registered by module name here, core may not link [anthropic] to the plugin.
        warnings.simplefilter("ignore")
        client = claude_client("\n[anthropic]\ncache = false\n")
    client.complete("anthropic/claude-sonnet-4-6", "hi", system="Be brief.")
    assert "cache_control" not in wire_server.requests[0].body.decode()
    # The request's own choice wins over the setting.
    client.complete("anthropic/claude-sonnet-4-6", "hi", system="Be brief.", cache=True)
    assert "cache_control" in wire_server.requests[1].body.decode()


def test_modelplug_stream_missing_key_fails_before_any_request(
    claude_client: MakeClient, wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = claude_client()
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(
        MissingKeyError, match="Set ANTHROPIC_API_KEY to use the provider anthropic"
    ):
        client.complete("anthropic/claude-sonnet-4-6", "hi")
    assert wire_server.requests == []


def test_modelplug_stream_abort_closes_the_request(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    data = recording("text.sse").read_bytes().split(b"\n", 1)[1]
    head, _, rest = data.partition(b"event: content_block_delta")
    # The first delta comes at once; the rest would take 30 s.
    second = rest.index(b"event: content_block_delta")
    wire_server.add([head + b"event: content_block_delta" + rest[:second], (30.0, rest[second:])])
    client = claude_client()
    responses: list[object] = []

    async def first_delta_then_abort() -> list[object]:
        async def keep(response: object) -> None:
            responses.append(response)

        HTTP.shared(client).http.event_hooks["response"].append(keep)
        seen: list[object] = []
        route = client.resolve("anthropic/claude-sonnet-4-6")
        stream = client.open_stream(route, as_request("hi"))
        async for event in stream:
            seen.append(event)
            if isinstance(event, TextDelta):
                break
        await stream.aclose()
        return seen

    async def main() -> list[object]:
        try:
            return await asyncio.wait_for(first_delta_then_abort(), timeout=5)
        finally:
            await client.aclose()

    seen = asyncio.run(main())
    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["Hello"]
    assert len(responses) == 1
    assert responses[0].is_closed  # type: ignore[attr-defined]
    # The server saw the connection go, during its 30 s wait.
    assert wire_server.wait_closed_by_client(wire_server.requests[0].connection)


def test_modelplug_stream_ignores_the_sdk_base_url_variable(
    claude_client: MakeClient,
    wire_server: WireServer,
    recording: Recording,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    wire_server.add_file(recording("text.sse"))
    assert claude_client().complete("anthropic/claude-sonnet-4-6", "hi").text == "Hello, world!"
    assert len(wire_server.requests) == 1


def test_sdk_client_uses_the_default_url_without_user_settings(
    make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    import modelplug_anthropic

    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    client = make_client(modelplug_anthropic)
    route = client.resolve("anthropic/claude-opus-5")

    async def build() -> str:
        try:
            sdk, _ = sdk_module.sdk_client(route, client, "sk-ant-unused-key")
            assert sdk.max_retries == 0
            assert sdk.timeout.read >= 1200
            return str(sdk.base_url)
        finally:
            await client.aclose()

    assert asyncio.run(build()).rstrip("/") == "https://api.anthropic.com"


def test_modelplug_stream_dropped_connection_is_transient_and_keeps_partial(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    # message_start, block start, ping, "Hello", then a reset.
    wire_server.add_file(recording("text.sse"), drop_after=4)
    with pytest.raises(ModelError) as caught:
        claude_client().complete("anthropic/claude-sonnet-4-6", "hi")
    assert caught.value.kind == "transient" and caught.value.retryable
    assert caught.value.partial is not None
    assert caught.value.partial.text == "Hello"


def test_modelplug_stream_a_redirect_is_not_followed(
    claude_client: Callable[..., Client], wire_server: WireServer
) -> None:
    # Following it would carry x-api-key to wherever the server points.
    wire_server.add(b"", status=307, headers={"location": f"{wire_server.url}/elsewhere"})
    client = claude_client()
    with pytest.raises(ModelError):
        client.complete("anthropic/claude-sonnet-4-6", "hi")
    assert [r.path for r in wire_server.requests] == ["/v1/messages"]


def test_modelplug_stream_records_the_model_the_server_named(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    # text.sse's message_start names claude-sonnet-4-6; asked for an alias, the
    # Response keeps what answered (the key every provider plugin uses).
    wire_server.add_file(recording("text.sse"))
    response = claude_client().complete("anthropic/claude-sonnet-4-latest", "hi")
    assert response.metadata["served_model"] == "claude-sonnet-4-6"
    assert response.metadata["id"] == "msg_01TextExample"


def test_modelplug_stream_names_no_served_model_when_it_is_the_one_asked(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("text.sse"))
    response = claude_client().complete("anthropic/claude-sonnet-4-6", "hi")
    assert "served_model" not in response.metadata
