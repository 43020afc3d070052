"""``POST /v1/messages/count_tokens`` with the official anthropic SDK's
``messages.count_tokens`` against the gateway on uvicorn and granian, in front of an
Anthropic upstream (counts) and an OpenAI-compatible one (cannot count: 501).

Upstream bytes:
- COUNTED: modelplug-anthropic's tests/recordings/count_tokens.json (Anthropic API
  reference, "Count tokens in a Message" response example: ``{"input_tokens":2095}``).
The OpenAI-compatible upstream is a server with no count API (its ``server`` not set
to llama.cpp's or vLLM's): the plugin answers None without asking it, so no bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import anthropic
import pytest
from modelplug import Client
from modelplug_gateway.app import Gateway
from modelplug_gateway.auth import OpenGate
from modelplug_gateway.count_tokens import parse_count_request
from modelplug_gateway.settings import GatewaySettings
from modelplug_gateway.shapes.base import ShapeError
from modelplug_kit.testing import WireServer

COUNTED = b'{"input_tokens":2095}'
WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


@pytest.fixture(params=["uvicorn", "granian"])
def server(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def wire() -> Iterator[WireServer]:
    upstream = WireServer().start()
    try:
        yield upstream
    finally:
        upstream.stop()


@pytest.fixture
def gateway_url(
    serve: Callable[..., AbstractContextManager[str]],
    make_client: Callable[..., Client],
    modelplug_config_dir: Path,
    wire: WireServer,
) -> Iterator[str]:
    (modelplug_config_dir / "config.toml").write_text(
        f'[providers.claude]\ntype = "anthropic"\nbase_url = "{wire.url}"\n'
        f'[providers.compat]\ntype = "openai-compatible"\nbase_url = "{wire.url}/v1"\n'
    )
    client = make_client("modelplug-anthropic", "modelplug-openai-compat", entry_points=True)
    with serve(Gateway(client, GatewaySettings(), OpenGate())) as url:
        yield url


def sdk(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key="unused", max_retries=2)


def test_an_anthropic_upstream_counts(gateway_url: str, wire: WireServer) -> None:
    wire.add(COUNTED, content_type="application/json")
    counted = sdk(gateway_url).messages.count_tokens(
        model="claude/claude-sonnet-4-6",
        system="Be brief.",
        messages=[{"role": "user", "content": "Weather in Paris?"}],
        tools=[WEATHER],  # type: ignore[list-item]
        thinking={"type": "enabled", "budget_tokens": 2048},
    )
    assert counted.input_tokens == 2095
    sent = wire.requests[-1]
    assert (sent.method, sent.path) == ("POST", "/v1/messages/count_tokens")
    body = sent.json()
    assert body["model"] == "claude-sonnet-4-6"
    assert body["system"] == "Be brief."
    assert body["tools"] == [WEATHER]
    assert body["messages"][0]["role"] == "user"


def test_an_upstream_that_cannot_count_is_a_501_in_anthropic_s_shape(
    gateway_url: str, wire: WireServer
) -> None:
    with pytest.raises(anthropic.InternalServerError) as raised:
        sdk(gateway_url).messages.count_tokens(
            model="compat/qwen3", messages=[{"role": "user", "content": "hello"}]
        )
    error = raised.value
    assert error.status_code == 501
    body = error.response.json()
    assert body["type"] == "error" and body["error"]["type"] == "api_error"
    message = body["error"]["message"]
    assert "cannot count" in message and "compat/qwen3" in message
    assert error.response.headers["x-should-retry"] == "false"
    assert error.response.headers["x-modelplug-route"] == "compat/qwen3"
    with pytest.raises(anthropic.InternalServerError):
        sdk(gateway_url).messages.count_tokens(
            model="compat/qwen3", messages=[{"role": "user", "content": "again"}]
        )
    assert wire.requests == []


def test_a_malformed_body_is_a_400_naming_the_field(gateway_url: str, wire: WireServer) -> None:
    with pytest.raises(anthropic.BadRequestError) as raised:
        sdk(gateway_url).messages.count_tokens(
            model="claude/claude-sonnet-4-6",
            messages=[{"role": "robot", "content": "hello"}],  # type: ignore[typeddict-item]
        )
    assert "messages.0.role" in str(raised.value)
    assert wire.requests == []


def test_the_count_body_needs_no_max_tokens_and_takes_no_stream() -> None:
    parsed = parse_count_request({"model": "m", "messages": [{"role": "user", "content": "x"}]})
    assert parsed.model == "m" and parsed.request.messages[0].text == "x"
    with pytest.raises(ShapeError, match="stream"):
        parse_count_request({"model": "m", "messages": [], "stream": False})
