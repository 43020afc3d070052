"""Gemini counts thought tokens toward maxOutputTokens: the caller's max_tokens is never
raised, and a thinkingBudget at or over it is brought under it (or, when the model's
smallest budget does not fit, the least thinking the model takes is asked), with a
Notice before the request goes. Checked on the body the loopback server received."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from modelplug.client.client import Client
from modelplug.contract.types import Notice, ThinkingRequest
from modelplug_kit.testing import WireServer

Sent = Callable[[str, int, ThinkingRequest], tuple[dict[str, Any], list[Notice]]]


@pytest.fixture
def sent(
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
    recorded: Callable[[str], Path],
) -> Sent:
    """``sent(model, max_tokens, thinking)``: the generationConfig the server received
    and the thinking-budget notices the caller heard."""

    def call(
        model: str, max_tokens: int, thinking: ThinkingRequest
    ) -> tuple[dict[str, Any], list[Notice]]:
        wire_server.add_file(recorded("text.sse"))
        notices: list[Notice] = []
        response = gemini_client().complete(
            f"gemini/{model}",
            "hi",
            max_tokens=max_tokens,
            thinking=thinking,
            on_event=lambda e: notices.append(e) if isinstance(e, Notice) else None,
        )
        assert response.text  # the answer still comes
        config = wire_server.requests[-1].json()["generationConfig"]
        return config, [n for n in notices if n.kind == "thinking_budget"]

    return call


def test_a_budget_over_max_tokens_shrinks_under_it(sent: Sent) -> None:
    config, notices = sent("gemini-2.5-flash", 300, ThinkingRequest(budget_tokens=299 * 4))
    assert config["maxOutputTokens"] == 300
    assert config["thinkingConfig"]["thinkingBudget"] == 299
    (notice,) = notices
    assert "thinking budget 1196" in notice.message and "maxOutputTokens 300" in notice.message
    assert notice.details == {"budget_tokens": 1196, "max_tokens": 300, "sent_budget_tokens": 299}


def test_an_effort_s_budget_over_max_tokens_shrinks_under_it(sent: Sent) -> None:
    config, notices = sent("gemini-2.5-pro", 4000, ThinkingRequest(effort="high"))
    assert config["maxOutputTokens"] == 4000
    assert config["thinkingConfig"]["thinkingBudget"] == 3999
    assert "(effort high)" in notices[0].message


def test_no_room_for_flash_lite_s_smallest_budget_turns_thinking_off(sent: Sent) -> None:
    config, notices = sent("gemini-2.5-flash-lite", 300, ThinkingRequest(budget_tokens=1024))
    assert config["maxOutputTokens"] == 300
    assert config["thinkingConfig"] == {"thinkingBudget": 0}
    assert "without thinking" in notices[0].message


def test_a_budget_under_max_tokens_goes_as_asked_without_a_notice(sent: Sent) -> None:
    config, notices = sent("gemini-2.5-flash", 4000, ThinkingRequest(budget_tokens=1024))
    assert config["maxOutputTokens"] == 4000
    assert config["thinkingConfig"]["thinkingBudget"] == 1024
    assert notices == []
