"""Converse has no penalty fields: frequency_penalty, presence_penalty and
repeat_penalty are left out of the body the loopback server receives, and a Notice
before the request says so."""

from __future__ import annotations

from typing import Any

from modelplug import as_request
from modelplug.contract.types import Notice

CLAUDE = "us.anthropic.claude-sonnet-4-6-v1:0"


def test_penalties_are_said_not_sent(client: Any, bedrock: Any, wire_server: Any) -> None:
    bedrock.serve(bedrock.recorded("text.eventstream"), model=CLAUDE.replace(":", "%3A"))
    notices: list[Notice] = []
    request = as_request("hi").model_copy(
        update={"frequency_penalty": 0.5, "presence_penalty": 0.5, "repeat_penalty": 1.1}
    )
    response = client().complete(
        f"bedrock/{CLAUDE}",
        request,
        on_event=lambda e: notices.append(e) if isinstance(e, Notice) else None,
    )
    assert response.text
    body = wire_server.requests[-1].json()
    assert "penalty" not in str(body).lower()
    (notice,) = [n for n in notices if n.kind == "sampling_unsupported"]
    assert notice.details["fields"] == ["frequency_penalty", "presence_penalty", "repeat_penalty"]
    assert "inferenceConfig has no penalties" in notice.message
