"""A caller's max_tokens is never raised, nor exceeded by a thinking budget: through an
OpenAI-compatible endpoint speaking Claude's thinking (the anthropic dialect), a budget
that does not fit under max_tokens is brought under it or left out, and a Notice says so
before the request goes. Checked on the body the WireServer received."""

from __future__ import annotations

from modelplug.contract.types import Message, Notice, Request, ThinkingRequest

DONE = [{"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}]
CLAUDE = {"models": {"wire/m": {"reasoning_dialect": "anthropic"}}}


def call(compat, wire_server, max_tokens, thinking):
    wire_server.add_sse(DONE, done=True)
    request = Request(
        messages=[Message(role="user", content="x")], max_tokens=max_tokens, thinking=thinking
    )
    events = list(compat(CLAUDE).stream("wire/m", request))
    notices = [e for e in events if isinstance(e, Notice)]
    return wire_server.requests[-1].json(), notices


def test_claude_code_s_300_with_a_budget_of_299_goes_as_300_without_thinking(compat, wire_server):
    body, notices = call(compat, wire_server, 300, ThinkingRequest(budget_tokens=299))
    assert body["max_tokens"] == 300
    assert body["thinking"] == {"type": "disabled"}
    (notice,) = notices
    assert notice.kind == "thinking_budget"
    assert "max_tokens 300" in notice.message and "299" in notice.message
    assert notice.details["sent_budget_tokens"] is None


def test_a_budget_above_max_tokens_is_sent_under_it(compat, wire_server):
    body, notices = call(compat, wire_server, 4000, ThinkingRequest(budget_tokens=10000))
    assert body["max_tokens"] == 4000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 3999}
    (notice,) = notices
    assert "sent as 3999" in notice.message


def test_an_effort_s_budget_is_fitted_too(compat, wire_server):
    body, notices = call(compat, wire_server, 2000, ThinkingRequest(effort="high"))
    assert body["max_tokens"] == 2000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1999}
    assert len(notices) == 1


def test_a_budget_that_fits_is_sent_as_asked_without_a_notice(compat, wire_server):
    body, notices = call(compat, wire_server, 4000, ThinkingRequest(budget_tokens=2048))
    assert body["max_tokens"] == 4000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert notices == []


def test_a_budget_below_claude_s_minimum_is_raised_to_it_when_max_tokens_has_room(
    compat, wire_server
):
    body, notices = call(compat, wire_server, 4000, ThinkingRequest(budget_tokens=500))
    assert body["max_tokens"] == 4000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    (notice,) = notices
    assert "below Claude's minimum of 1024" in notice.message
