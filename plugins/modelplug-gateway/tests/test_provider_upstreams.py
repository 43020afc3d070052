"""The openai SDK through the gateway to a loopback upstream of each provider type,
serving recorded bytes (each recording's first line says where they come from; they
are copies of the provider plugins' own test recordings); and a caller that hangs up
closes the upstream connection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest
from modelplug import Client
from modelplug_kit.testing import WireServer

RECORDINGS = Path(__file__).parent / "recordings"
HELLO = [{"role": "user", "content": "hello"}]

UPSTREAMS = [
    # (plugin, provider type, recording, content type, the text the recording spells)
    (
        "modelplug-openai-compat",
        "openai-compatible",
        "openai_compat_text.sse",
        "text/event-stream",
        "Sockets wait in silence — café ☕",
    ),
    (
        "modelplug-anthropic",
        "anthropic",
        "anthropic_text.sse",
        "text/event-stream",
        "Hello, world!",
    ),
    (
        "modelplug-gemini",
        "gemini",
        "gemini_text.sse",
        "text/event-stream",
        "**Italian:** Ciao",
    ),
    (
        "modelplug-ollama",
        "ollama",
        "ollama_text.jsonl",
        "application/x-ndjson",
        "What can I do for you today?",
    ),
]


def upstream_client(
    plugin: str, kind: str, wire: WireServer, tmp_path: Path, **provider: Any
) -> Client:
    pytest.importorskip(plugin.replace("-", "_"))
    base = wire.url + "/v1" if kind == "openai-compatible" else wire.url
    entry = {"type": kind, "base_url": base, **provider}
    return Client(
        enable=[plugin],
        # Ollama's automatic /api/show probe is off: the wire serves the chat only.
        config={
            "providers": {"up": entry},
            **({"ollama": {"probe": False}} if kind == "ollama" else {}),
        },
        user_config=tmp_path / "none.toml",
        project_dir="/",
        environ={"MODELPLUG_DATA_DIR": str(tmp_path / "data")},
    )


@pytest.mark.parametrize(("plugin", "kind", "recording", "content_type", "text"), UPSTREAMS)
def test_openai_sdk_reaches_each_provider_type(
    make_gateway: Any,
    serve: Any,
    wire_server: WireServer,
    tmp_path: Path,
    plugin: str,
    kind: str,
    recording: str,
    content_type: str,
    text: str,
) -> None:
    client = upstream_client(plugin, kind, wire_server, tmp_path)
    wire_server.add_file(RECORDINGS / recording, content_type=content_type)
    wire_server.add_file(RECORDINGS / recording, content_type=content_type)
    with serve(make_gateway(client=client)) as url:
        sdk = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        plain = sdk.chat.completions.with_raw_response.create(model="up/some-model", messages=HELLO)
        chunks = list(
            sdk.chat.completions.create(model="up/some-model", messages=HELLO, stream=True)
        )
    answer = plain.parse().choices[0].message.content or ""
    assert text in answer
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert streamed == answer
    assert plain.headers["x-modelplug-route"].startswith("up/")
    assert len(wire_server.requests) == 2


def test_a_caller_that_hangs_up_closes_the_upstream_connection(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path
) -> None:
    client = upstream_client("modelplug-openai-compat", "openai-compatible", wire_server, tmp_path)
    # A slow upstream: one chunk, then a chunk every half second for a minute.
    first = (
        '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
        '"choices":[{"index":0,"delta":{"content":"tick"},"finish_reason":null}]}'
    )
    wire_server.add_sse([first] * 120, delay=0.5, content_type="text/event-stream")
    with serve(make_gateway(client=client)) as url:
        sdk = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        stream = sdk.chat.completions.create(model="up/m", messages=HELLO, stream=True)
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content == "tick":
                break
        stream.close()
        # Left alone, the upstream would go on for a minute: seen closed within this
        # wait, the gateway closed it when the caller left, not when the answer ended.
        closed = wire_server.wait_closed_by_client(1, timeout=10)
    assert closed, "the upstream connection stayed open after the caller left"
    assert wire_server.pending == 0  # the slow answer was the one served, and cut


def test_a_call_that_failed_upstream_is_logged_and_counted_with_its_route(
    make_gateway: Any,
    serve: Any,
    wire_server: WireServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import json
    import logging

    import httpx2

    client = upstream_client("modelplug-openai-compat", "openai-compatible", wire_server, tmp_path)
    # Invented: a server's plain 400 in OpenAI's error shape (not retried, no fallback).
    wire_server.add_json(
        {"error": {"message": "unknown parameter", "type": "invalid_request_error"}}, status=400
    )
    caplog.set_level(logging.INFO, logger="modelplug.gateway.requests")
    with serve(make_gateway(client=client)) as url:
        sdk = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        with pytest.raises(openai.BadRequestError) as raised:
            sdk.chat.completions.create(model="up/m", messages=HELLO)
        metrics = httpx2.get(url + "/metrics").text
    assert raised.value.response.headers["x-modelplug-route"] == "up/m"
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name.endswith("requests")]
    (line,) = [x for x in lines if x["path"] == "/v1/chat/completions"]
    assert (line["status"], line["route"]) == (400, "up/m")
    counted = 'modelplug_gateway_requests_total{endpoint="chat",route="up/m",status_class="4xx"} 1'
    assert counted in metrics.splitlines()
    assert len(wire_server.requests) == 1
