"""The Responses shape over each kind of upstream the issue names: an OpenAI-compatible
Chat Completions server, Anthropic, and an OpenAI Responses server, each a loopback
WireServer serving recorded bytes (each recording's first line says where it comes
from: copies of the provider plugins' own recordings). Sent with the official openai
SDK to the gateway on a real ASGI server: plain and streamed answers, a tool round trip,
structured output, reasoning going back, what passes through to a Responses upstream
and what is dropped (and named) for the others, and upstream errors in the Responses
shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
from modelplug import Client
from modelplug_kit.testing import WireServer

RECORDINGS = Path(__file__).parent / "recordings"
SSE = "text/event-stream"

# (plugin, provider type, a tool call answer, its call, a text answer, its text)
UPSTREAMS = {
    "openai-compatible": (
        "modelplug-openai-compat",
        "openai_compat_parallel_tools.sse",
        ("call_Wx1", "get_weather"),
        "openai_compat_text.sse",
        "Sockets wait in silence — café ☕",
    ),
    "anthropic": (
        "modelplug-anthropic",
        "anthropic_tool_use.sse",
        (None, "get_weather"),
        "anthropic_text.sse",
        "Hello, world!",
    ),
    "openai-responses": (
        "modelplug-openai",
        "openai_responses_reasoning_tool.sse",
        ("call_AB6AaRZ1FYZB2RwS6A5vbdqn", "calculator"),
        "openai_responses_after_tool.sse",
        "",
    ),
}
KINDS = list(UPSTREAMS)
TOOLS = [
    {
        "type": "function",
        "name": name,
        "description": "A tool.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": True},
    }
    for name in ("get_weather", "calculator")
]


def upstream_client(kind: str, wire: WireServer, tmp_path: Path, **provider: Any) -> Client:
    plugin = UPSTREAMS[kind][0]
    pytest.importorskip(plugin.replace("-", "_"))
    base = wire.url + "/v1"
    if kind == "anthropic":
        base = wire.url
    return Client(
        enable=[plugin],
        config={
            "providers": {
                "up": {"type": kind, "base_url": base, "api_key_env": "UP_KEY", **provider}
            }
        },
        user_config=tmp_path / "none.toml",
        project_dir="/",
        environ={"MODELPLUG_DATA_DIR": str(tmp_path / "data"), "UP_KEY": "upstream-key"},
    )


def sdk_for(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)


@pytest.mark.parametrize("kind", KINDS)
def test_a_tool_round_trip_over_each_upstream(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path, kind: str
) -> None:
    _, calls, (call_id, name), text_answer, text = UPSTREAMS[kind]
    wire_server.add_file(RECORDINGS / calls, content_type=SSE)
    wire_server.add_file(RECORDINGS / text_answer, content_type=SSE)
    client = upstream_client(kind, wire_server, tmp_path)
    with serve(make_gateway(client=client)) as url:
        sdk = sdk_for(url)
        first = sdk.responses.create(
            model="up/m",
            input="Use a tool.",
            tools=TOOLS,  # type: ignore[arg-type]
            include=["reasoning.encrypted_content"],
        )
        called = [item for item in first.output if item.type == "function_call"]
        history: list[Any] = [
            {"role": "user", "content": "Use a tool."},
            *[item.model_dump(exclude_none=True) for item in first.output],
            *[
                {"type": "function_call_output", "call_id": c.call_id, "output": "42"}
                for c in called
            ],
        ]
        stream = sdk.responses.stream(model="up/m", input=history, tools=TOOLS)  # type: ignore[arg-type]
        with stream as events:
            kinds = [event.type for event in events]
            second = events.get_final_response()
    assert called and called[0].name == name
    if call_id is not None:
        assert called[0].call_id == call_id
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert second.status == "completed"
    assert text in second.output_text
    assert second.usage is not None and second.usage.output_tokens > 0
    sent = wire_server.requests[1].json()
    results = _tool_results(kind, sent)
    assert results == {c.call_id: "42" for c in called}


def _tool_results(kind: str, body: dict[str, Any]) -> dict[str, str]:
    """The tool results an upstream request carries, by call id, in its own format."""
    if kind == "openai-compatible":
        return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}
    if kind == "anthropic":
        return {
            b["tool_use_id"]: "".join(p["text"] for p in b["content"])
            for m in body["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b["type"] == "tool_result"
        }
    return {
        i["call_id"]: i["output"] for i in body["input"] if i.get("type") == "function_call_output"
    }


def test_a_responses_upstreams_reasoning_item_goes_back_to_it_unchanged(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path
) -> None:
    wire_server.add_file(RECORDINGS / "openai_responses_reasoning_tool.sse", content_type=SSE)
    wire_server.add_file(RECORDINGS / "openai_responses_after_tool.sse", content_type=SSE)
    client = upstream_client("openai-responses", wire_server, tmp_path)
    with serve(make_gateway(client=client)) as url:
        sdk = sdk_for(url)
        first = sdk.responses.create(
            model="up/gpt-5.1-codex-max",
            input="12 + 7?",
            tools=TOOLS,  # type: ignore[arg-type]
            include=["reasoning.encrypted_content"],
        )
        (call,) = [i for i in first.output if i.type == "function_call"]
        sdk.responses.create(
            model="up/gpt-5.1-codex-max",
            input=[
                {"role": "user", "content": "12 + 7?"},
                *[i.model_dump(exclude_none=True) for i in first.output],
                {"type": "function_call_output", "call_id": call.call_id, "output": "19"},
            ],
            tools=TOOLS,  # type: ignore[arg-type]
        )
    (reasoning,) = [i for i in first.output if i.type == "reasoning"]
    assert reasoning.id.startswith("rs_01830d66") and reasoning.encrypted_content
    sent = [i for i in wire_server.requests[1].json()["input"] if i.get("type") == "reasoning"]
    assert [(i["id"], i["encrypted_content"]) for i in sent] == [
        (reasoning.id, reasoning.encrypted_content)
    ]


def test_claudes_signed_thinking_comes_back_to_claude_whole(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path
) -> None:
    wire_server.add_file(RECORDINGS / "anthropic_thinking_signature.sse", content_type=SSE)
    wire_server.add_file(RECORDINGS / "anthropic_text.sse", content_type=SSE)
    client = upstream_client("anthropic", wire_server, tmp_path)
    with serve(make_gateway(client=client)) as url:
        sdk = sdk_for(url)
        with sdk.responses.stream(
            model="up/claude", input="2 + 2?", include=["reasoning.encrypted_content"]
        ) as events:
            summaries = [
                e.delta for e in events if e.type == "response.reasoning_summary_text.delta"
            ]
            first = events.get_final_response()
        sdk.responses.create(
            model="up/claude",
            input=[
                {"role": "user", "content": "2 + 2?"},
                *[i.model_dump(exclude_none=True) for i in first.output],
                {"role": "user", "content": "And 3 + 3?"},
            ],
        )
    assert "".join(summaries) == "Let me add these. 2 + 2 = 4."
    assert first.output_text == "The answer is 4."
    assistant = wire_server.requests[1].json()["messages"][1]
    assert assistant["role"] == "assistant"
    thought = assistant["content"][0]
    assert thought["type"] == "thinking"
    assert thought["signature"].startswith("EqQBCgIYAhIM1gbcDa9GJwZA2b3h")
    assert thought["thinking"] == "Let me add these. 2 + 2 = 4."


CODEX_LIKE = {
    "tools": [
        TOOLS[0],
        {"type": "web_search"},
        {
            "type": "namespace",
            "name": "collaboration",
            "tools": [{"type": "function", "name": "spawn_agent", "parameters": {}}],
        },
    ],
    "input": [
        {"type": "message", "role": "developer", "content": "You are Codex."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
        {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "*** x"},
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "done"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Go"}]},
    ],
    "text": {"verbosity": "low"},
    "prompt_cache_key": "session-1",
}


def test_codex_tool_types_pass_through_to_a_responses_upstream(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path
) -> None:
    wire_server.add_file(RECORDINGS / "openai_responses_text.sse", content_type=SSE)
    client = upstream_client("openai-responses", wire_server, tmp_path)
    with serve(make_gateway(client=client)) as url:
        raw = sdk_for(url).responses.with_raw_response.create(
            model="up/gpt-5", stream=False, **CODEX_LIKE
        )
    sent = wire_server.requests[0].json()
    assert "x-modelplug-dropped" not in raw.headers
    assert sent["tools"] == CODEX_LIKE["tools"]
    assert sent["input"] == CODEX_LIKE["input"]
    assert "instructions" not in sent  # its developer message went once, among the items
    assert (sent["text"], sent["prompt_cache_key"]) == ({"verbosity": "low"}, "session-1")
    assert raw.parse().output_text == "The final result is **570**."


@pytest.mark.parametrize("kind", ["openai-compatible", "anthropic"])
def test_codex_tool_types_are_dropped_and_named_for_other_upstreams(
    make_gateway: Any,
    serve: Any,
    wire_server: WireServer,
    tmp_path: Path,
    kind: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging

    caplog.set_level(logging.INFO, logger="modelplug.gateway")
    wire_server.add_file(RECORDINGS / UPSTREAMS[kind][3], content_type=SSE)
    client = upstream_client(kind, wire_server, tmp_path)
    with serve(make_gateway(client=client)) as url:
        raw = sdk_for(url).responses.with_raw_response.create(model="up/m", **CODEX_LIKE)
    dropped = raw.headers["x-modelplug-dropped"].split(", ")
    expected = ["input.custom_tool_call", "input.custom_tool_call_output", "text.verbosity"]
    expected += ["tools.namespace"]
    if kind != "anthropic":  # Claude runs a web search; an OpenAI-compatible server none
        expected.append("tools.web_search")
    assert dropped == sorted(expected)
    (notice,) = [r.notice for r in caplog.records if hasattr(r, "notice")]  # type: ignore[attr-defined]
    assert (notice.kind, notice.details["fields"]) == ("dropped_fields", sorted(expected))
    sent = wire_server.requests[0].json()
    assert "prompt_cache_key" not in sent and "text" not in sent
    if kind == "anthropic":
        assert [block["text"] for block in sent["system"]] == ["You are Codex."]
        assert [t.get("name") for t in sent["tools"]] == ["get_weather", "web_search"]
    else:
        assert sent["messages"][0] == {"role": "system", "content": "You are Codex."}
        assert [t["function"]["name"] for t in sent["tools"]] == ["get_weather"]
    assert UPSTREAMS[kind][4] in raw.parse().output_text


def test_a_structured_answer_is_asked_of_the_upstream_in_its_own_form(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path
) -> None:
    # Invented: a Chat Completions stream whose text is the JSON the schema asks for.
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": '{"n": 4}'}, "finish_reason": "stop"}],
    }
    wire_server.add_sse([chunk], done=True, content_type=SSE)
    # vLLM: a server the openai-compat plugin sends response_format to.
    client = upstream_client("openai-compatible", wire_server, tmp_path, server="vllm")
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    with serve(make_gateway(client=client)) as url:
        answer = sdk_for(url).responses.create(
            model="up/m",
            input="2 + 2 as JSON",
            text={"format": {"type": "json_schema", "name": "sum", "schema": schema}},
        )
    sent = wire_server.requests[0].json()
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["name"] == "sum"
    assert json.loads(answer.output_text) == {"n": 4}


@pytest.mark.parametrize(
    ("status", "body", "raised"),
    [
        (
            429,
            {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}},
            openai.RateLimitError,
        ),
        (
            400,
            {"error": {"message": "bad field", "type": "invalid_request_error"}},
            openai.BadRequestError,
        ),
        (
            401,
            {"error": {"message": "bad key", "type": "invalid_api_key"}},
            openai.AuthenticationError,
        ),
    ],
)
def test_an_upstream_error_is_the_sdks_exception_in_the_responses_shape(
    make_gateway: Any,
    serve: Any,
    wire_server: WireServer,
    tmp_path: Path,
    status: int,
    body: dict[str, Any],
    raised: type[openai.APIStatusError],
) -> None:
    # Invented: OpenAI-shaped error bodies of a Responses server, with their statuses.
    wire_server.add_json(body, status=status, headers={"retry-after": "0"})
    client = upstream_client("openai-responses", wire_server, tmp_path)
    with serve(make_gateway(client=client)) as url, pytest.raises(raised) as caught:
        sdk_for(url).responses.create(model="up/m", input="hi")
    error = caught.value.body
    assert isinstance(error, dict)
    assert set(error) == {"message", "type", "param", "code"}
    assert isinstance(error["code"], str)
    assert caught.value.response.headers["x-modelplug-route"] == "up/m"


def test_an_error_after_the_stream_began_is_an_error_event_and_a_failed_response(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path
) -> None:
    # Invented: an Anthropic stream that says a word, then an overloaded error event.
    frames = [
        {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
                                              "model": "claude", "content": [], "usage": {"input_tokens": 3, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}},
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ]  # fmt: skip
    wire_server.add_sse(frames, event_names=True, content_type=SSE)
    client = upstream_client("anthropic", wire_server, tmp_path)
    with serve(make_gateway(client=client)) as url:
        stream = sdk_for(url).responses.create(model="up/claude", input="hi", stream=True)
        events = list(stream)
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert "response.output_text.delta" in kinds
    assert kinds[-2:] == ["error", "response.failed"]
    failed = events[-1]
    assert failed.type == "response.failed"
    assert failed.response.status == "failed"
    assert failed.response.error is not None and failed.response.error.code == "overloaded"


def test_another_models_reasoning_is_not_passed_through_to_a_responses_upstream(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path
) -> None:
    from modelplug import ThinkingBlock
    from modelplug_gateway.shapes.reasoning_items import reasoning_item

    claude = ThinkingBlock(text="Plan.", signature="sig", wire={"type": "thinking"})
    sealed = reasoning_item(claude, "claude/opus", encrypted=True)
    items = [*CODEX_LIKE["input"][:2], sealed, *CODEX_LIKE["input"][2:]]
    wire_server.add_file(RECORDINGS / "openai_responses_text.sse", content_type=SSE)
    client = upstream_client("openai-responses", wire_server, tmp_path)
    with serve(make_gateway(client=client)) as url:
        sdk_for(url).responses.create(model="up/gpt-5", **{**CODEX_LIKE, "input": items})
    sent = wire_server.requests[0].json()["input"]
    assert sent == CODEX_LIKE["input"]  # everything as sent but Claude's reasoning


@pytest.mark.parametrize("kind", ["anthropic", "openai-responses"])
def test_a_web_search_kept_to_cached_results_never_becomes_a_live_one(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path, kind: str
) -> None:
    # The Codex CLI's default tool (its recorded body): external_web_access false asks
    # for cached results only. Claude's web search fetches the live web, so it is not
    # asked for; a Responses upstream is sent the tool as it came and keeps to it.
    cached = {"type": "web_search", "external_web_access": False}
    wire_server.add_file(RECORDINGS / UPSTREAMS[kind][3], content_type=SSE)
    client = upstream_client(kind, wire_server, tmp_path)
    with serve(make_gateway(client=client)) as url:
        raw = sdk_for(url).responses.with_raw_response.create(
            model="up/m", input="Hi", tools=[TOOLS[0], cached]
        )
    sent = wire_server.requests[0].json()
    if kind == "anthropic":
        assert raw.headers["x-modelplug-dropped"] == "tools.web_search"
        assert [t.get("name") for t in sent["tools"]] == ["get_weather"]
    else:
        assert "x-modelplug-dropped" not in raw.headers
        assert sent["tools"] == [TOOLS[0], cached]
    assert UPSTREAMS[kind][4] in raw.parse().output_text
