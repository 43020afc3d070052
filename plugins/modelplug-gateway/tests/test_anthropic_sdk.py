"""The official anthropic SDK (sync and async, streamed and not) against a running
gateway, on uvicorn and on granian: over the echo model, a FakeModel, and loopback upstreams of three provider
types (Anthropic, OpenAI-compatible and Gemini: an Anthropic-SDK client calling a
non-Claude model), and each error status parsed into the SDK's own exception class.

Upstream bytes, embedded here so the tests run from this plugin's sdist alone:
- ANTHROPIC_THINKING: modelplug-anthropic's tests/recordings/thinking.sse (shape of
  Anthropic's extended thinking docs, "Streaming thinking").
- OPENAI_TOOLS: modelplug-openai-compat's tests/recordings/openai_parallel_tools.sse
  (OpenAI Chat Completions streaming, gpt-4o, parallel tool calls), first call only.
- GEMINI_THINKING_CALL: modelplug-gemini's tests/recorded/thinking_tool_call.sse (a
  real gemini-2.5-flash stream from simonw/llm-gemini's cassettes), signature shortened.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import Any

import anthropic
import pytest
from modelplug import Client, ErrorClass, ModelError
from modelplug.contract.types import ToolResultBlock, Usage
from modelplug.testing import FakeModel
from modelplug.testing.fake import reply, thinking, tool_use
from modelplug_gateway.app import Gateway
from modelplug_gateway.auth import OpenGate
from modelplug_gateway.settings import GatewaySettings
from modelplug_kit.testing import WireServer

SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds2Cx2CTbGwsZ3cYg3kZ7Lq4Bg9G0hlsqkHqpyPqKXdgvgjH7="

ANTHROPIC_THINKING = "".join(
    f"event: {json.loads(line)['type']}\ndata: {line}\n\n"
    for line in [
        '{"type":"message_start","message":{"id":"msg_01ThinkExample","type":"message","role":"assistant","model":"claude-opus-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":40,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}',
        '{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me add these. "}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"2 + 2 = 4."}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"'
        + SIGNATURE
        + '"}}',
        '{"type":"content_block_stop","index":0}',
        '{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}',
        '{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"The answer is 4."}}',
        '{"type":"content_block_stop","index":1}',
        '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":40,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":60}}',
        '{"type":"message_stop"}',
    ]
)
ANTHROPIC_TEXT = ANTHROPIC_THINKING.replace("2 + 2 = 4.", "again.")

OPENAI_TOOLS = "".join(
    f"data: {line}\n\n"
    for line in [
        '{"id":"chatcmpl-BxQ2","object":"chat.completion.chunk","created":1764460801,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_Wx1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}],"usage":null}',
        '{"id":"chatcmpl-BxQ2","object":"chat.completion.chunk","created":1764460801,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"city\\": \\"Paris\\"}"}}]},"finish_reason":null}],"usage":null}',
        '{"id":"chatcmpl-BxQ2","object":"chat.completion.chunk","created":1764460801,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}',
        '{"id":"chatcmpl-BxQ2","object":"chat.completion.chunk","created":1764460801,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":80,"completion_tokens":17,"total_tokens":97}}',
        "[DONE]",
    ]
)

GEMINI_THINKING_CALL = "".join(
    f"data: {line}\n\n"
    for line in [
        '{"candidates": [{"content": {"parts": [{"text": "**Generating Pelican Names**\\n\\nI should use the tool.", "thought": true}], "role": "model"}, "index": 0}], "usageMetadata": {"promptTokenCount": 32, "totalTokenCount": 74, "thoughtsTokenCount": 42}, "modelVersion": "gemini-2.5-flash", "responseId": "OYpyaqycKd2V_uMP65TsgA0"}',
        '{"candidates": [{"content": {"parts": [{"functionCall": {"name": "pelican_name_generator", "args": {}}, "thoughtSignature": "ClgBEU0yD8z3tYzbgjZ1jc6lL1fw"}], "role": "model"}, "finishReason": "STOP", "index": 0}], "usageMetadata": {"promptTokenCount": 32, "candidatesTokenCount": 12, "totalTokenCount": 86, "thoughtsTokenCount": 42}, "modelVersion": "gemini-2.5-flash", "responseId": "OYpyaqycKd2V_uMP65TsgA0"}',
    ]
)

WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


class Running:
    """A gateway running for the module; ``use(client)`` swaps the Client it calls."""

    def __init__(self, serving: Callable[..., AbstractContextManager[str]], server: str) -> None:
        self.app = Gateway(Client(plugins=[FakeModel()]), GatewaySettings(), OpenGate())
        self._stack = ExitStack()
        self.url = self._stack.enter_context(serving(self.app, server=server))

    def use(self, client: Client) -> None:
        self.app.client = client

    def stop(self) -> None:
        self._stack.close()


@pytest.fixture(scope="module", params=["uvicorn", "granian"])
def gateway(
    request: pytest.FixtureRequest, serving: Callable[..., AbstractContextManager[str]]
) -> Iterator[Running]:
    """The gateway on each ASGI server in turn."""
    running = Running(serving, request.param)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def upstream() -> Iterator[WireServer]:
    server = WireServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def wire(upstream: WireServer) -> WireServer:
    assert upstream.pending == 0, "a previous test left responses queued"
    upstream.requests.clear()
    return upstream


@pytest.fixture
def serve(
    gateway: Running,
    make_client: Callable[..., Client],
    modelplug_config_dir: Path,
    wire: WireServer,
) -> Callable[..., None]:
    """``serve(*plugins)``: the gateway calls a Client with these plugins and three
    keyless loopback providers on ``wire``: ``claude`` (anthropic), ``compat``
    (openai-compatible) and ``gem`` (gemini)."""

    def make(*plugins: object) -> None:
        (modelplug_config_dir / "config.toml").write_text(
            f'[providers.claude]\ntype = "anthropic"\nbase_url = "{wire.url}"\n'
            f'[providers.compat]\ntype = "openai-compatible"\nbase_url = "{wire.url}/v1"\n'
            f'[providers.gem]\ntype = "gemini"\nbase_url = "{wire.url}"\n'
            '[aliases]\nthinker = "claude/claude-opus-5"\nother = "compat/gpt-4o"\n'
            '[roles]\nsmart = "thinker"\n'
        )
        names = ["modelplug-anthropic", "modelplug-openai-compat", "modelplug-gemini"]
        gateway.use(make_client(*names, *plugins, entry_points=True))

    return make


def sdk(gateway: Running) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=gateway.url, api_key="unused", max_retries=0)


def async_sdk(gateway: Running) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=gateway.url, api_key="unused", max_retries=0)


def test_sync_call_over_the_echo_model(gateway: Running, serve: Callable[..., None]) -> None:
    serve()
    message = sdk(gateway).messages.create(
        model="echo/echo", max_tokens=50, messages=[{"role": "user", "content": "hello gateway"}]
    )
    assert message.type == "message" and message.role == "assistant"
    assert message.model == "echo/echo"
    assert message.content[0].type == "text" and message.content[0].text == "hello gateway"
    assert message.stop_reason == "end_turn"
    assert message.usage.output_tokens > 0


def test_sync_stream_over_the_fake_model(gateway: Running, serve: Callable[..., None]) -> None:
    fake = FakeModel([reply("Streamed words.", usage=Usage(input=7, output=3, cache_read=2))])
    serve(fake)
    with sdk(gateway).messages.stream(
        model="fake/claude",
        max_tokens=50,
        system="Be brief.",
        messages=[{"role": "user", "content": "hi"}],
    ) as stream:
        texts = list(stream.text_stream)
        final = stream.get_final_message()
    assert "".join(texts) == "Streamed words."
    assert final.usage.input_tokens == 7 and final.usage.cache_read_input_tokens == 2
    assert final.usage.output_tokens == 3
    assert fake.requests[0].system == "Be brief."


def test_tools_round_trip_sync(gateway: Running, serve: Callable[..., None]) -> None:
    fake = FakeModel([tool_use("get_weather", {"city": "Paris"}, id="toolu_1"), reply("18C.")])
    serve(fake)
    client = sdk(gateway)
    asked = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.messages.create(
        model="fake/claude", max_tokens=50, tools=[WEATHER], messages=asked
    )
    assert first.stop_reason == "tool_use"
    call = first.content[0]
    assert call.type == "tool_use" and call.id == "toolu_1" and call.input == {"city": "Paris"}
    second = client.messages.create(
        model="fake/claude",
        max_tokens=50,
        tools=[WEATHER],
        tool_choice={"type": "auto"},
        messages=[
            *asked,
            {"role": "assistant", "content": [b.model_dump() for b in first.content]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"}],
            },
        ],
    )
    assert second.content[0].text == "18C."
    result = fake.requests[1].messages[2].content[0]
    assert isinstance(result, ToolResultBlock) and result.text == "18C"
    assert fake.requests[1].tools[0].name == "get_weather"
    assert fake.requests[1].tool_choice == "auto"


def test_async_stream_of_thinking_and_tools(gateway: Running, serve: Callable[..., None]) -> None:
    step = thinking("Pondering.", "Let me look.", signature=SIGNATURE)
    step.message.content.append(tool_use("get_weather", {"city": "Oslo"}).message.content[0])
    step.stop_reason = "tool_use"
    serve(FakeModel([step]))

    async def run() -> Any:
        async with async_sdk(gateway).messages.stream(
            model="fake/claude",
            max_tokens=4096,
            thinking={"type": "enabled", "budget_tokens": 2048},
            tools=[WEATHER],
            messages=[{"role": "user", "content": "Weather in Oslo?"}],
        ) as stream:
            kinds = [event.type async for event in stream]
            return kinds, await stream.get_final_message()

    kinds, final = asyncio.run(run())
    assert "thinking" in kinds and "text" in kinds and "input_json" in kinds
    think, text, call = final.content
    assert think.type == "thinking" and think.thinking == "Pondering."
    assert think.signature == SIGNATURE
    assert text.text == "Let me look."
    assert call.type == "tool_use" and call.input == {"city": "Oslo"}
    assert final.stop_reason == "tool_use"


def test_async_call_not_streamed(gateway: Running, serve: Callable[..., None]) -> None:
    serve(FakeModel([reply("async answer")]))

    async def run() -> Any:
        return await async_sdk(gateway).messages.create(
            model="fake/claude", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        )

    assert asyncio.run(run()).content[0].text == "async answer"


def test_claude_thinking_goes_back_to_claude_byte_for_byte(
    gateway: Running, serve: Callable[..., None], wire: WireServer
) -> None:
    serve()
    wire.add(ANTHROPIC_THINKING)
    wire.add(ANTHROPIC_TEXT)
    client = sdk(gateway)
    asked = [{"role": "user", "content": "What is 2 + 2?"}]
    with client.messages.stream(
        model="claude/claude-opus-5",
        max_tokens=20000,
        thinking={"type": "enabled", "budget_tokens": 10000},
        messages=asked,
    ) as stream:
        first = stream.get_final_message()
    assert first.content[0].type == "thinking" and first.content[0].signature == SIGNATURE
    assert first.content[1].text == "The answer is 4."
    sent_back = [b.model_dump(exclude_none=True) for b in first.content]
    for block in sent_back:
        block.pop("citations", None)
    client.messages.create(
        model="claude/claude-opus-5",
        max_tokens=20000,
        thinking={"type": "enabled", "budget_tokens": 10000},
        messages=[
            *asked,
            {"role": "assistant", "content": sent_back},
            {"role": "user", "content": "And 3 + 3?"},
        ],
    )
    upstream_body = wire.requests[1].json()
    assert upstream_body["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "Let me add these. 2 + 2 = 4.",
        "signature": SIGNATURE,
    }


@pytest.mark.parametrize("name", ["thinker", "smart"])
def test_claude_thinking_goes_back_through_an_alias_or_a_role(
    name: str, gateway: Running, serve: Callable[..., None], wire: WireServer
) -> None:
    serve()
    wire.add(ANTHROPIC_THINKING)
    wire.add(ANTHROPIC_TEXT)
    client = sdk(gateway)
    asked = [{"role": "user", "content": "What is 2 + 2?"}]
    thinking: Any = {"type": "enabled", "budget_tokens": 10000}
    first = client.messages.create(model=name, max_tokens=20000, thinking=thinking, messages=asked)
    sent_back = [b.model_dump(exclude_none=True) for b in first.content]
    for block in sent_back:
        block.pop("citations", None)
    client.messages.create(
        model=name,
        max_tokens=20000,
        thinking=thinking,
        messages=[
            *asked,
            {"role": "assistant", "content": sent_back},
            {"role": "user", "content": "And 3 + 3?"},
        ],
    )
    replayed = wire.requests[1].json()["messages"][1]["content"]
    assert replayed[0] == {
        "type": "thinking",
        "thinking": "Let me add these. 2 + 2 = 4.",
        "signature": SIGNATURE,
    }
    assert replayed[1]["text"] == "The answer is 4."


def test_claude_thinking_is_not_sent_to_a_model_an_alias_names_elsewhere(
    gateway: Running, serve: Callable[..., None], wire: WireServer
) -> None:
    serve()
    wire.add(OPENAI_TOOLS)
    sent_back = [
        {"type": "thinking", "thinking": "Let me add these.", "signature": SIGNATURE},
        {"type": "text", "text": "The answer is 4."},
    ]
    sdk(gateway).messages.create(
        model="other",
        max_tokens=100,
        messages=[
            {"role": "user", "content": "What is 2 + 2?"},
            {"role": "assistant", "content": sent_back},
            {"role": "user", "content": "And 3 + 3?"},
        ],
    )
    body = json.dumps(wire.requests[0].json())
    assert SIGNATURE not in body and "Let me add these." not in body
    assert "The answer is 4." in body


def test_an_anthropic_client_calls_an_openai_compatible_model(
    gateway: Running, serve: Callable[..., None], wire: WireServer
) -> None:
    serve()
    wire.add(OPENAI_TOOLS)
    with sdk(gateway).messages.stream(
        model="compat/gpt-4o",
        max_tokens=100,
        tools=[WEATHER],
        messages=[{"role": "user", "content": "Weather in Paris?"}],
    ) as stream:
        final = stream.get_final_message()
    call = final.content[0]
    assert call.type == "tool_use" and call.id == "call_Wx1" and call.name == "get_weather"
    assert call.input == {"city": "Paris"}
    assert final.stop_reason == "tool_use"
    assert final.usage.input_tokens == 80 and final.usage.output_tokens == 17
    sent = wire.requests[0].json()
    assert sent["model"] == "gpt-4o" and sent["tools"][0]["function"]["name"] == "get_weather"


def test_an_anthropic_client_calls_a_gemini_model(
    gateway: Running, serve: Callable[..., None], wire: WireServer
) -> None:
    serve()
    wire.add(GEMINI_THINKING_CALL)
    message = sdk(gateway).messages.create(
        model="gem/gemini-2.5-flash",
        max_tokens=1000,
        tools=[{"name": "pelican_name_generator", "input_schema": {"type": "object"}}],
        messages=[{"role": "user", "content": "Two names for my pelican"}],
    )
    kinds = [b.type for b in message.content]
    assert kinds == ["thinking", "tool_use"]
    assert message.content[0].thinking.startswith("**Generating Pelican Names**")
    assert message.content[1].name == "pelican_name_generator"
    assert message.stop_reason == "tool_use"
    assert "gemini-2.5-flash" in wire.requests[0].path


@pytest.mark.parametrize(
    ("error_class", "exception", "status"),
    [
        (ErrorClass(kind="rate_limit", retry_after=3), anthropic.RateLimitError, 429),
        (ErrorClass(kind="overloaded", status=529), anthropic.OverloadedError, 529),
        (ErrorClass(kind="overloaded"), anthropic.ServiceUnavailableError, 503),
        (ErrorClass(kind="auth"), anthropic.AuthenticationError, 401),
        (ErrorClass(kind="auth", status=403), anthropic.PermissionDeniedError, 403),
        (ErrorClass(kind="not_found"), anthropic.NotFoundError, 404),
        (ErrorClass(kind="bad_request"), anthropic.BadRequestError, 400),
        (ErrorClass(kind="bad_request", status=413), anthropic.RequestTooLargeError, 413),
        (ErrorClass(kind="unreachable", fallback=True), anthropic.InternalServerError, 502),
        (ErrorClass.transient("upstream read timeout"), anthropic.InternalServerError, 504),
        (ErrorClass(kind="other"), anthropic.InternalServerError, 500),
    ],
    ids=lambda v: getattr(v, "kind", getattr(v, "__name__", str(v))),
)
@pytest.mark.parametrize("streamed", [False, True], ids=["create", "stream"])
def test_each_error_status_is_the_sdk_s_own_exception(
    gateway: Running,
    serve: Callable[..., None],
    error_class: ErrorClass,
    exception: type[anthropic.APIStatusError],
    status: int,
    streamed: bool,
) -> None:
    serve(FakeModel([ModelError("the upstream said no", error_class=error_class)]))
    fields: dict[str, Any] = {
        "model": "fake/claude",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "x"}],
    }
    with pytest.raises(exception) as caught:
        if streamed:
            with sdk(gateway).messages.stream(**fields) as stream:
                stream.get_final_message()
        else:
            sdk(gateway).messages.create(**fields)
    assert caught.value.status_code == status
    assert "the upstream said no" in caught.value.message
    body = caught.value.body
    assert isinstance(body, dict) and body["type"] == "error"
    if status == 429:
        assert caught.value.response.headers["retry-after"] == "3"


def test_an_unknown_field_in_a_message_is_a_bad_request_in_anthropic_s_shape(
    gateway: Running, serve: Callable[..., None]
) -> None:
    # (An unknown top-level field is a beta feature's: test_claude_code_requests.py.)
    serve()
    messages: Any = [{"role": "user", "content": "x", "frobnicate": True}]
    with pytest.raises(anthropic.BadRequestError) as caught:
        sdk(gateway).messages.create(model="echo/echo", max_tokens=10, messages=messages)
    assert caught.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "messages.0.frobnicate: Extra inputs are not permitted",
        },
    }


def test_an_error_after_the_stream_began_reaches_the_sdk(
    gateway: Running, serve: Callable[..., None]
) -> None:
    class Midway(FakeModel):
        async def _play(self, route: Any, request: Any) -> Any:  # type: ignore[override]
            from modelplug.contract.types import TextDelta

            yield TextDelta(text="partial ")
            raise ModelError("overloaded midway", error_class=ErrorClass(kind="overloaded"))

    serve(Midway([]))
    with (
        pytest.raises(anthropic.APIStatusError) as caught,
        sdk(gateway).messages.stream(
            model="fake/claude", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        ) as stream,
    ):
        for _ in stream:
            pass
    assert "overloaded midway" in str(caught.value)
    body = caught.value.body
    assert isinstance(body, dict) and body["error"]["type"] == "overloaded_error"
