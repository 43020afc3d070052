"""A JSON answer where a stream was asked for: the events as one JSON array (what
``streamGenerateContent`` answers without ``alt=sse``, which a proxy may drop) give the
same Response as the stream; a JSON error answered with 200 is classified by its own
code."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from modelplug import ModelError
from modelplug.client.client import Client
from modelplug_kit.testing import WireServer, load_recording, split_events

SPEC = "gemini/gemini-2.5-flash"


def test_a_json_array_of_events_reads_as_the_stream(
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
    recorded: Callable[[str], Path],
) -> None:
    client = gemini_client()
    wire_server.add_file(recorded("thinking_tool_call.sse"))
    streamed = client.complete(SPEC, "hi")
    events = [
        json.loads(chunk.strip().removeprefix(b"data:"))
        for chunk in split_events(load_recording(recorded("thinking_tool_call.sse")))
    ]
    wire_server.add_json(events)
    answered = client.complete(SPEC, "hi")
    assert [b.type for b in answered.message.content] == ["thinking", "tool_use", "opaque"]
    assert answered.model_dump(exclude={"message"}) == streamed.model_dump(exclude={"message"})
    # The call id is generated (the API gave none): the rest of each block is the same.
    same = [b.model_dump(exclude={"id"}) for b in answered.message.content]
    assert same == [b.model_dump(exclude={"id"}) for b in streamed.message.content]


def test_a_json_error_answered_with_200_is_classified_by_its_code(
    gemini_client: Callable[..., Client], wire_server: WireServer
) -> None:
    body = {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12s"}],
        }
    }
    wire_server.add_json(body)
    with pytest.raises(ModelError) as caught:
        gemini_client().complete(SPEC, "hi")
    error = caught.value
    assert (error.kind, error.error_class.retry_after) == ("rate_limit", 12.0)
    assert error.error_class.status == 429
    assert str(error).startswith(
        "gemini failed RESOURCE_EXHAUSTED: Resource has been exhausted (e.g. check quota).; "
        "retry after 12 s"
    )
