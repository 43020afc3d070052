"""The Messages request the plugin sends is the one the anthropic SDK sends for the same
parameters: the same method and path (under a base URL with a path of its own), the
same JSON body, the same key, version and user headers. Both go to the loopback server,
which records them; the SDK is the real one, installed beside the plugin."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import modelplug_anthropic
import pytest
from modelplug import Client, as_request
from modelplug.contract.types import (
    ImageBlock,
    Message,
    Request,
    ServerTool,
    TextBlock,
    ThinkingRequest,
    ToolSpec,
)
from modelplug_anthropic.mapping import to_wire_params
from modelplug_kit.testing import RecordedRequest, WireServer

MakeClient = Callable[..., Client]
TEST_KEY = "sk-ant-test-0123456789abcdef"
Recording = Callable[[str], Path]
# One pixel, as a base64 PNG: an image block with non-trivial bytes.
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

REQUESTS = {
    "plain": ("claude-sonnet-4-6", as_request("Say hello")),
    "everything": (
        "claude-opus-4-6",
        Request(
            system="Réponds brièvement. ✓",
            messages=[
                Message(
                    role="user",
                    content=[
                        TextBlock(text="Quel temps fait-il à Zürich ? 天気"),
                        ImageBlock(media_type="image/png", data=PIXEL),
                    ],
                )
            ],
            tools=[
                ToolSpec(
                    name="get_weather",
                    description="Weather for a place",
                    input_schema={
                        "type": "object",
                        "properties": {"location": {"type": "string"}},
                        "required": ["location"],
                    },
                )
            ],
            server_tools=[ServerTool(max_uses=2)],
            tool_choice="auto",
            thinking=ThinkingRequest(effort="high"),
            stop=["\n\nHuman:"],
            top_k=5,
            # Fields that go as the SDK's keyword arguments and fields it has none for.
            extra={"metadata": {"user_id": "u-1"}, "service_tier": "auto", "top_p": 0.9},
        ),
    ),
}


def sdk_split(params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(``messages.create`` keyword arguments, the rest for ``extra_body``): how the
    plugin called the SDK before it sent the request itself."""
    anthropic = pytest.importorskip("anthropic")
    signature = inspect.signature(anthropic.resources.messages.AsyncMessages.create)
    skip = {"self", "extra_headers", "extra_query", "extra_body", "timeout", "stream"}
    known = {name for name in signature.parameters if name not in skip}
    return (
        {k: v for k, v in params.items() if k in known},
        {k: v for k, v in params.items() if k not in known},
    )


def sent_by_sdk(base_url: str, params: dict[str, Any], headers: dict[str, str]) -> None:
    anthropic = pytest.importorskip("anthropic")
    kwargs, extra = sdk_split(params)

    async def send() -> None:
        async with httpx2.AsyncClient() as http:
            sdk = anthropic.AsyncAnthropic(
                api_key=TEST_KEY,
                base_url=base_url,
                http_client=http,
                max_retries=0,
                default_headers=headers,
            )
            create = sdk.messages.with_streaming_response.create
            async with create(**kwargs, stream=True, extra_body=extra or None) as raw:
                await raw.read()

    asyncio.run(send())


@pytest.fixture
def gateway_client(
    make_client: MakeClient,
    modelplug_config_dir: Path,
    wire_server: WireServer,
    monkeypatch: pytest.MonkeyPatch,
) -> Client:
    """The plugin pointed at a gateway path on the loopback server, with a user header."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS"):
        monkeypatch.delenv(name, raising=False)
    (modelplug_config_dir / "config.toml").write_text(
        "[providers.anthropic]\n"
        'type = "anthropic"\n'
        f'base_url = "{wire_server.url}/gateway"\n'
        'api_key_env = "ANTHROPIC_API_KEY"\n'  # a loopback server named no key would get none
        'headers = { "x-team" = "core" }\n'
    )
    return make_client(modelplug_anthropic)


def essential(request: RecordedRequest) -> dict[str, Any]:
    """What the API acts on. Left out: the SDK's ``accept: application/json`` (the
    plugin asks for ``text/event-stream``, the body says ``stream``), its user-agent
    and ``x-stainless-*`` telemetry, and the transport's own headers."""
    headers = request.headers
    return {
        "method": request.method,
        "path": request.path,
        "authorization": headers.get("authorization"),
        "x-api-key": headers.get("x-api-key"),
        "anthropic-version": headers.get("anthropic-version"),
        "anthropic-beta": headers.get("anthropic-beta"),
        "content-type": headers.get("content-type"),
        "x-team": headers.get("x-team"),
        "body": request.json(),
    }


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_the_plugin_sends_what_the_sdk_sends(
    name: str,
    gateway_client: Client,
    wire_server: WireServer,
    recording: Recording,
) -> None:
    model, request = REQUESTS[name]
    wire_server.add_file(recording("text.sse"))
    wire_server.add_file(recording("text.sse"))
    spec = f"anthropic/{model}"
    assert gateway_client.complete(spec, request).text == "Hello, world!"
    route = gateway_client.resolve(spec)
    # The plugin's defaults: prompt caching on.
    params = to_wire_params(request, route, cache=True)
    sent_by_sdk(f"{wire_server.url}/gateway", params, {"x-team": "core"})

    ours, theirs = wire_server.requests
    assert essential(ours) == essential(theirs)
    assert ours.path == "/gateway/v1/messages"
    assert ours.headers["authorization"] == f"Bearer {TEST_KEY}"
    assert ours.json()["stream"] is True
    # The same encoding (compact, UTF-8 as it is): the same bytes but for key order.
    assert len(ours.body) == len(theirs.body)
    assert sorted(ours.body) == sorted(theirs.body)


def test_the_body_is_utf8_as_the_sdk_encodes_it(
    gateway_client: Client, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("text.sse"))
    gateway_client.complete("anthropic/claude-sonnet-4-6", "Zürich ✓")
    body = wire_server.requests[0].body
    assert "Zürich ✓".encode() in body
    assert json.loads(body)["messages"][0]["content"][-1]["text"] == "Zürich ✓"
