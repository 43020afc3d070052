"""A caller's max_tokens is never raised: a thinking budget that does not fit under it
is fitted (Anthropic takes 1024 <= budget_tokens < max_tokens) or left out, and a Notice
says so before the request goes. Checked on the body the loopback server received."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from modelplug import Client
from modelplug.contract.types import Notice, ThinkingRequest
from modelplug_kit.testing import WireServer

MakeClient = Callable[..., Client]
Recording = Callable[[str], Path]
Sent = Callable[[str, int, int], tuple[dict[str, Any], list[Notice]]]


@pytest.fixture
def sent(claude_client: MakeClient, wire_server: WireServer, recording: Recording) -> Sent:
    """``sent(model, max_tokens, budget)``: the body the server received for that call
    and the thinking-budget notices the caller heard."""

    def call(model: str, max_tokens: int, budget: int) -> tuple[dict[str, Any], list[Notice]]:
        wire_server.add_file(recording("text.sse"))
        notices: list[Notice] = []
        response = claude_client().complete(
            f"anthropic/{model}",
            "hi",
            max_tokens=max_tokens,
            thinking=ThinkingRequest(budget_tokens=budget),
            on_event=lambda e: notices.append(e) if isinstance(e, Notice) else None,
        )
        assert response.text == "Hello, world!"
        body = wire_server.requests[-1].json()
        return body, [n for n in notices if n.kind == "thinking_budget"]

    return call


def test_claude_code_s_300_with_a_299_budget_goes_as_300_without_thinking(sent: Sent) -> None:
    body, notices = sent("claude-sonnet-4-6", 300, 299)
    assert body["max_tokens"] == 300
    assert body["thinking"] == {"type": "disabled"}
    (notice,) = notices
    assert "max_tokens 300" in notice.message and "299" in notice.message
    assert notice.details == {"budget_tokens": 299, "max_tokens": 300, "sent_budget_tokens": None}


def test_a_model_that_always_thinks_gets_no_budget_and_no_disabled(sent: Sent) -> None:
    body, notices = sent("claude-opus-5", 300, 299)
    assert body["max_tokens"] == 300
    assert "thinking" not in body  # it refuses `disabled`; it thinks within max_tokens
    assert len(notices) == 1


def test_a_budget_over_max_tokens_shrinks_under_it(sent: Sent) -> None:
    body, notices = sent("claude-opus-4-6", 4000, 20_000)
    assert body["max_tokens"] == 4000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 3999}
    (notice,) = notices
    assert "budget_tokens 20000" in notice.message and "max_tokens 4000" in notice.message
    assert "sent as 3999" in notice.message


def test_a_budget_under_the_api_s_minimum_is_raised_to_it_within_max_tokens(sent: Sent) -> None:
    body, notices = sent("claude-opus-4-6", 4000, 500)
    assert body["max_tokens"] == 4000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    (notice,) = notices
    assert "minimum of 1024" in notice.message


def test_a_budget_that_fits_goes_as_asked_without_a_notice(sent: Sent) -> None:
    body, notices = sent("claude-opus-4-6", 8000, 2000)
    assert body["max_tokens"] == 8000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert notices == []
