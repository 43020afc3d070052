"""The Responses API has no penalty fields: frequency_penalty, presence_penalty and
repeat_penalty are left out of the body and named in the plugin's Notice of fields it
cannot send."""

from __future__ import annotations

from modelplug.contract.types import Notice

from .test_request_body import sent


def test_penalties_are_said_not_sent(responses, wire_server, wire, recorded):
    body, events = sent(
        responses,
        wire_server,
        wire,
        recorded,
        spec="wire/gpt-4.1",
        frequency_penalty=0.5,
        presence_penalty=0.5,
        repeat_penalty=1.1,
    )
    assert "penalty" not in str(body).lower()
    notices = [e for e in events if isinstance(e, Notice)]
    assert len(notices) == 1
    assert "frequency_penalty, presence_penalty, repeat_penalty" in notices[0].message
