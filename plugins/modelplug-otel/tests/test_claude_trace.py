"""A Claude call over the loopback server: modelplug-anthropic's Messages stream goes
through the kit's HTTP path, not the anthropic SDK (only its Batch API uses the SDK), so
no ``anthropic.messages.create`` span of the SDK's own starts a second trace: one trace,
the call's CLIENT span and one span per attempt, the 529 and the answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import modelplug_anthropic
import modelplug_otel
from modelplug_fallback.policy import FallbackPolicy
from modelplug_kit import MemoryCooldowns
from opentelemetry.trace import SpanKind

RECORDINGS = Path(__file__).parent / "recordings"
# Anthropic's error body shape (docs "Errors"); the message is invented.
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


async def _no_wait(seconds: float) -> None:
    return None


def test_a_claude_call_with_a_retry_is_one_trace_of_genai_spans(
    make_client: Any,
    modelplug_config_dir: Path,
    wire_server: Any,
    spans: Any,
    monkeypatch: Any,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
    (modelplug_config_dir / "config.toml").write_text(
        f'[providers.anthropic]\ntype = "anthropic"\nbase_url = "{wire_server.url}"\n'
        'api_key_env = "ANTHROPIC_API_KEY"\n'
    )
    wire_server.add_json(OVERLOADED, status=529)
    wire_server.add_file(RECORDINGS / "claude_text.sse")
    policy = FallbackPolicy(store=MemoryCooldowns(), sleep=_no_wait, random=lambda: 0.5)
    client = make_client(policy, modelplug_otel, modelplug_anthropic)

    response = client.complete(
        "anthropic/claude-sonnet-4-latest", "Say hello", on_event=lambda e: None
    )

    assert response.text == "Hello, world!"
    finished = spans()
    assert len({s.context.trace_id for s in finished}) == 1
    assert [s.name for s in finished if s.kind is SpanKind.CLIENT] == [
        "chat claude-sonnet-4-latest"
    ]
    assert not any(s.name.startswith("anthropic.") for s in finished)
    (call,) = [s for s in finished if s.kind is SpanKind.CLIENT]
    attempts = sorted((s for s in finished if s is not call), key=lambda s: s.start_time)
    assert [s.name for s in attempts] == [
        "attempt 1 anthropic/claude-sonnet-4-latest",
        "attempt 2 anthropic/claude-sonnet-4-latest",
    ]
    assert attempts[0].attributes["error.type"] == "overloaded"
    assert attempts[0].attributes["modelplug.error.status"] == 529
    a = call.attributes
    assert a["gen_ai.provider.name"] == "anthropic"
    assert a["gen_ai.response.model"] == "claude-sonnet-4-6"  # what the server named
    assert a["gen_ai.response.id"] == "msg_01TextExample"
    assert a["gen_ai.usage.input_tokens"] == 25 + 10 + 100
    assert a["gen_ai.usage.cache_read.input_tokens"] == 100
    assert a["gen_ai.usage.cache_creation.input_tokens"] == 10
    assert a["server.address"] == "127.0.0.1" and a["server.port"] == wire_server.port
