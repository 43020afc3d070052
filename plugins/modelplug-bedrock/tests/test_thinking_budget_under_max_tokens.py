"""Claude on Bedrock: the caller's max_tokens (maxTokens) is never raised, and a thinking
budget that does not fit under it (Claude takes 1024 <= budget_tokens < maxTokens) is
fitted or left out, with a Notice before the request goes. Checked on the body the
loopback server received."""

from __future__ import annotations

from typing import Any

from modelplug import as_request
from modelplug.contract.types import Notice, ThinkingRequest

CLAUDE = "us.anthropic.claude-sonnet-4-6-v1:0"


def sent(
    client: Any, bedrock: Any, wire_server: Any, max_tokens: int, thinking: ThinkingRequest
) -> tuple[dict[str, Any], list[Notice]]:
    """The body the server received and the thinking-budget notices the caller heard."""
    bedrock.serve(bedrock.recorded("text.eventstream"), model=CLAUDE.replace(":", "%3A"))
    notices: list[Notice] = []
    request = as_request("hi").model_copy(update={"max_tokens": max_tokens, "thinking": thinking})
    response = client().complete(
        f"bedrock/{CLAUDE}",
        request,
        on_event=lambda e: notices.append(e) if isinstance(e, Notice) else None,
    )
    assert response.text  # the answer still comes
    return wire_server.requests[-1].json(), [n for n in notices if n.kind == "thinking_budget"]


def test_max_tokens_300_with_a_299_budget_goes_as_300_without_thinking(
    client, bedrock, wire_server
):
    body, notices = sent(client, bedrock, wire_server, 300, ThinkingRequest(budget_tokens=299))
    assert body["inferenceConfig"]["maxTokens"] == 300
    assert "thinking" not in body.get("additionalModelRequestFields", {})
    (notice,) = notices
    assert "maxTokens 300" in notice.message and "299" in notice.message
    assert notice.details["sent_budget_tokens"] is None


def test_an_effort_s_budget_over_max_tokens_shrinks_under_it(client, bedrock, wire_server):
    body, notices = sent(client, bedrock, wire_server, 4000, ThinkingRequest(effort="high"))
    assert body["inferenceConfig"]["maxTokens"] == 4000
    assert body["additionalModelRequestFields"]["thinking"] == {
        "type": "enabled",
        "budget_tokens": 3999,
    }
    (notice,) = notices
    assert "thinking budget 16384 (effort high)" in notice.message
    assert "sent as 3999" in notice.message


def test_a_budget_that_fits_goes_as_asked_without_a_notice(client, bedrock, wire_server):
    body, notices = sent(client, bedrock, wire_server, 8000, ThinkingRequest(budget_tokens=2000))
    assert body["inferenceConfig"]["maxTokens"] == 8000
    assert body["additionalModelRequestFields"]["thinking"]["budget_tokens"] == 2000
    assert notices == []
