"""A second message_start: repeated before any block, only the second is kept; after
the first message had content, the stream is two answers spliced, an error (never a
merge, which would put thinking under the wrong signature)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from modelplug import Client, ModelError
from modelplug.contract.types import ThinkingBlock, ThinkingDelta
from modelplug_kit.testing import WireServer

MakeClient = Callable[..., Client]
Recording = Callable[[str], Path]
SPEC = "anthropic/claude-sonnet-4-6"


def test_modelplug_stream_repeated_message_start_keeps_one_message(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("duplicate_message_start.sse"))
    response = claude_client().complete(SPEC, "hi")
    assert response.text == "Hello, World!"
    assert response.metadata["id"] == "msg_dup"
    assert (response.usage.input, response.usage.output) == (17, 227)


def test_modelplug_stream_spliced_second_message_is_an_error_not_a_merge(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("spliced_message_start.sse"))
    shown: list[str] = []
    with pytest.raises(ModelError) as caught:
        for event in claude_client().stream(SPEC, "hi"):
            if isinstance(event, ThinkingDelta):
                shown.append(event.text)
    error = caught.value
    assert error.kind == "transient" and error.retryable
    assert "msg_second" in str(error) and "spliced" in str(error)
    # Nothing of the second answer was shown or kept.
    assert shown == ["I will call the tool."]
    assert error.partial is not None
    blocks = error.partial.message.content
    assert len(blocks) == 1 and isinstance(blocks[0], ThinkingBlock)
    assert blocks[0].signature == "sig-first"
    assert error.partial.tool_calls == []
