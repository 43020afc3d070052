"""Claude Code through the gateway (issue 46, item 1): its requests are accepted, and
what the neutral Request has no field for reaches each upstream as it can take it.

The body is modelled on Claude Code's requests as the issue describes them: posted to
``/v1/messages?beta=true`` with ``anthropic-beta: context-management-2025-06-27``, a
``system`` of text blocks with a cache mark, a ``role: "system"`` message in the middle
of the conversation, ``context_management`` (``clear_tool_uses_20250919``),
``metadata.user_id``, ``stream: true`` and tools. Invented here: every text (the system
prompt's, the messages', the system message's), the Bash tool's description and schema,
the user_id's value and max_tokens; the upstream streams are small hand-written ones in
the shape of the APIs' own (Anthropic Messages, OpenAI Chat Completions).

Sent through the official anthropic SDK's beta client, as Claude Code uses it, to a
gateway on a real ASGI server in front of a loopback upstream that records what it gets.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import Any

import anthropic
import pytest
from modelplug import Client
from modelplug.testing import FakeModel
from modelplug_gateway.app import Gateway
from modelplug_gateway.auth import OpenGate
from modelplug_gateway.settings import GatewaySettings
from modelplug_kit.testing import WireServer

BETA = "context-management-2025-06-27"
CONTEXT_MANAGEMENT = {"edits": [{"type": "clear_tool_uses_20250919"}]}
SYSTEM_NOTE = "The user changed the working directory to /tmp/project."

ANTHROPIC_HELLO = "".join(
    f"event: {json.loads(line)['type']}\ndata: {line}\n\n"
    for line in [
        '{"type":"message_start","message":{"id":"msg_01Hello","type":"message","role":"assistant","model":"claude-opus-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":30,"output_tokens":1}}}',
        '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello again!"}}',
        '{"type":"content_block_stop","index":0}',
        '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":4}}',
        '{"type":"message_stop"}',
    ]
)
OPENAI_HELLO = "".join(
    f"data: {line}\n\n"
    for line in [
        '{"id":"chatcmpl-H1","object":"chat.completion.chunk","created":1764460801,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello again!"},"finish_reason":null}]}',
        '{"id":"chatcmpl-H1","object":"chat.completion.chunk","created":1764460801,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
        "[DONE]",
    ]
)


def claude_code_body(model: str) -> dict[str, Any]:
    """The fields of one Claude Code turn (see the module docstring)."""
    return {
        "model": model,
        "max_tokens": 32000,
        "system": [
            {
                "type": "text",
                "text": "You are a coding agent.",
                "cache_control": {"type": "ephemeral"},
            },
            {"type": "text", "text": "Answer briefly."},
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "say hello"}]},
            {"role": "system", "content": SYSTEM_NOTE},
            {"role": "assistant", "content": [{"type": "text", "text": "Hello!"}]},
            {"role": "user", "content": [{"type": "text", "text": "say hello again"}]},
        ],
        "tools": [
            {
                "name": "Bash",
                "description": "Run a shell command",
                "input_schema": {
                    "type": "object",
                    "properties": {"command": {"type": "string"}},
                    "required": ["command"],
                },
            }
        ],
        "metadata": {"user_id": "user_0123abcd_account_session_4567"},
        "stream": True,
    }


class Running:
    """A gateway running for the module; ``use(client)`` swaps the Client it calls."""

    def __init__(self, serving: Callable[..., AbstractContextManager[str]], server: str) -> None:
        self.app = Gateway(Client(plugins=[FakeModel()]), GatewaySettings(), OpenGate())
        self._stack = ExitStack()
        self.url = self._stack.enter_context(serving(self.app, server=server))

    def stop(self) -> None:
        self._stack.close()


@pytest.fixture(scope="module", params=["uvicorn", "granian"])
def gateway(
    request: pytest.FixtureRequest, serving: Callable[..., AbstractContextManager[str]]
) -> Iterator[Running]:
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
def wire(
    gateway: Running,
    upstream: WireServer,
    make_client: Callable[..., Client],
    modelplug_config_dir: Path,
) -> WireServer:
    """The gateway calls ``claude/...`` (anthropic) and ``compat/...`` (openai-compatible)
    on the recording loopback upstream."""
    assert upstream.pending == 0, "a previous test left responses queued"
    upstream.requests.clear()
    (modelplug_config_dir / "config.toml").write_text(
        f'[providers.claude]\ntype = "anthropic"\nbase_url = "{upstream.url}"\n'
        f'[providers.compat]\ntype = "openai-compatible"\nbase_url = "{upstream.url}/v1"\n'
    )
    gateway.app.client = make_client(
        "modelplug-anthropic", "modelplug-openai-compat", entry_points=True
    )
    return upstream


def send_like_claude_code(gateway: Running, model: str) -> tuple[dict[str, str], str]:
    """One streamed turn through the SDK's beta client at ``?beta=true`` with the beta
    header: the response's headers and the text streamed."""
    client = anthropic.Anthropic(base_url=gateway.url, api_key="unused", max_retries=0)
    body = claude_code_body(model)
    del body["stream"]
    raw = client.beta.messages.with_raw_response.create(
        **body,
        stream=True,
        betas=[BETA],
        extra_body={"context_management": CONTEXT_MANAGEMENT},
        extra_query={"beta": "true"},
    )
    text = ""
    for event in raw.parse():
        if event.type == "content_block_delta" and event.delta.type == "text_delta":
            text += event.delta.text
    return dict(raw.headers), text


def test_an_anthropic_upstream_gets_the_beta_field_and_header_unchanged(
    gateway: Running, wire: WireServer
) -> None:
    wire.add(ANTHROPIC_HELLO)
    headers, text = send_like_claude_code(gateway, "claude/claude-opus-5")
    assert text == "Hello again!"
    assert "x-modelplug-dropped" not in headers
    sent = wire.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["anthropic-beta"] == BETA
    body = sent.json()
    assert body["context_management"] == CONTEXT_MANAGEMENT
    assert "betas" not in body


def test_an_anthropic_upstream_gets_the_system_message_in_its_system_prompt(
    gateway: Running, wire: WireServer
) -> None:
    wire.add(ANTHROPIC_HELLO)
    send_like_claude_code(gateway, "claude/claude-opus-5")
    body = wire.requests[0].json()
    system = body["system"]
    texts = [system] if isinstance(system, str) else [b["text"] for b in system]
    # The request's own system prompt first, then the system message, in order.
    assert "\n\n".join(texts) == "You are a coding agent.\n\nAnswer briefly.\n\n" + SYSTEM_NOTE
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert SYSTEM_NOTE not in json.dumps(body["messages"])


def test_another_upstream_gets_neither_and_the_answer_names_what_was_dropped(
    gateway: Running, wire: WireServer
) -> None:
    wire.add(OPENAI_HELLO)
    headers, text = send_like_claude_code(gateway, "compat/gpt-4o")
    assert text == "Hello again!"
    assert headers["x-modelplug-dropped"] == "context_management"
    sent = wire.requests[0]
    assert "anthropic-beta" not in sent.headers
    body = sent.json()
    assert "context_management" not in body and "betas" not in body


def test_another_upstream_gets_the_system_message_at_the_head_of_the_next_user_turn(
    gateway: Running, wire: WireServer
) -> None:
    wire.add(OPENAI_HELLO)
    send_like_claude_code(gateway, "compat/gpt-4o")
    messages = wire.requests[0].json()["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert SYSTEM_NOTE not in json.dumps(messages[:3])
    last = messages[3]["content"]
    texts = [last] if isinstance(last, str) else [part["text"] for part in last]
    assert "\n".join(texts).startswith(f"<system>\n{SYSTEM_NOTE}\n</system>")
    assert "\n".join(texts).endswith("say hello again")


def test_a_dropped_field_is_named_on_an_answer_not_streamed_too(
    gateway: Running, wire: WireServer
) -> None:
    wire.add(OPENAI_HELLO)
    client = anthropic.Anthropic(base_url=gateway.url, api_key="unused", max_retries=0)
    raw = client.messages.with_raw_response.create(
        model="compat/gpt-4o",
        max_tokens=100,
        messages=[{"role": "user", "content": "say hello"}],
        extra_body={"context_management": CONTEXT_MANAGEMENT, "speed": "fast"},
        extra_query={"beta": "true"},
    )
    assert raw.headers["x-modelplug-dropped"] == "context_management, speed"
    assert raw.parse().content[0].text == "Hello again!"  # type: ignore[union-attr]
