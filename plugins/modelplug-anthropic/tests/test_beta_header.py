"""``Request.extra["betas"]`` goes out as the ``anthropic-beta`` header, not in the body:
the way the SDK's ``client.beta.messages.create(betas=[...])`` sends it, and the way the
gateway passes a Messages client's own ``anthropic-beta`` header on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from modelplug import Client, RequestError
from modelplug.contract.types import Request
from modelplug_anthropic.mapping import betas_of, to_wire_params
from modelplug_kit.testing import WireServer

MakeClient = Callable[..., Client]
Recording = Callable[[str], Path]


def test_betas_are_sent_as_the_anthropic_beta_header_and_not_in_the_body(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("text.sse"))
    request = Request(
        messages=[{"role": "user", "content": "hi"}],
        extra={
            "betas": ["context-management-2025-06-27", "interleaved-thinking-2025-05-14"],
            "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
        },
    )
    claude_client().complete("anthropic/claude-sonnet-4-6", request)
    sent = wire_server.requests[0]
    assert sent.headers["anthropic-beta"] == (
        "context-management-2025-06-27,interleaved-thinking-2025-05-14"
    )
    body = sent.json()
    assert "betas" not in body
    assert body["context_management"] == {"edits": [{"type": "clear_tool_uses_20250919"}]}


def test_betas_join_the_user_s_configured_anthropic_beta_header(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("text.sse"))
    client = claude_client('headers = { anthropic-beta = "files-api-2025-04-14" }\n')
    request = Request(messages=[{"role": "user", "content": "hi"}], extra={"betas": "a-1, b-2"})
    client.complete("anthropic/claude-sonnet-4-6", request)
    assert wire_server.requests[0].headers["anthropic-beta"] == "files-api-2025-04-14,a-1,b-2"


def test_no_betas_no_header(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("text.sse"))
    claude_client().complete("anthropic/claude-sonnet-4-6", "hi")
    assert "anthropic-beta" not in wire_server.requests[0].headers


def test_betas_of_refuses_what_is_not_names(claude_client: MakeClient) -> None:
    with pytest.raises(RequestError):
        betas_of(Request(messages=[{"role": "user", "content": "x"}], extra={"betas": [1]}))
    request = Request(messages=[{"role": "user", "content": "x"}], extra={"betas": ["x"]})
    assert betas_of(request) == ["x"]
    route = claude_client().resolve("anthropic/claude-sonnet-4-6")
    assert "betas" not in to_wire_params(request, route)
