"""A tool call cut by maxTokens (stopReason max_tokens while its toolUse input was still
being written) ends as every provider ends it: no tool call the caller would run, the
raw arguments in metadata["truncated_tool_calls"], a Notice of kind truncated_tool_call,
stop_reason max_tokens; and core raises TruncatedToolCallError carrying that Response."""

from __future__ import annotations

import pytest
from modelplug import ModelError, TruncatedToolCallError
from modelplug.contract.types import Event, Notice, TextBlock, ToolCallStart, ToolUseBlock


def test_a_tool_call_cut_at_max_tokens_is_not_returned_as_a_call(client, bedrock):
    bedrock.serve(bedrock.recorded("tool_use_cut_at_max_tokens.eventstream"))
    events: list[Event] = []
    with pytest.raises(TruncatedToolCallError) as caught:
        events.extend(client().stream("bedrock/m", "weather in Paris?"))
    assert (caught.value.tool_name, caught.value.arguments) == ("get_temperature", '{"city":"Par')
    response = caught.value.partial
    assert response is not None

    assert response.stop_reason == "max_tokens"
    assert response.tool_calls == []
    assert not [b for b in response.message.content if isinstance(b, ToolUseBlock)]
    assert [type(b) for b in response.message.content] == [TextBlock]
    assert response.metadata["truncated_tool_calls"] == [
        {
            "id": "tooluse_lAG_zP8QRHmSYOwZzzaCqA",
            "name": "get_temperature",
            "arguments": '{"city":"Par',
        }
    ]
    (notice,) = [e for e in events if isinstance(e, Notice)]
    assert notice.kind == "truncated_tool_call"
    assert "get_temperature" in notice.message and "max_tokens" in notice.message
    # The start was shown as it came; Done, the truth, holds no call.
    assert [e.name for e in events if isinstance(e, ToolCallStart)] == ["get_temperature"]


def test_a_whole_tool_call_before_the_cut_is_kept_whole_on_the_error(client, bedrock):
    # A call whose JSON is complete when the limit hits (in a later block) is whole; the
    # answer is still refused as a turn to run, and the whole call is on its partial.
    body = b"".join(
        [
            bedrock.event("messageStart", {"role": "assistant"}),
            bedrock.event(
                "contentBlockStart",
                {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}},
            ),
            bedrock.event(
                "contentBlockDelta",
                {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"a": 1}'}}},
            ),
            bedrock.event("contentBlockStop", {"contentBlockIndex": 0}),
            bedrock.event(
                "contentBlockStart",
                {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t2", "name": "g"}}},
            ),
            bedrock.event(
                "contentBlockDelta",
                {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"b": [1, '}}},
            ),
            bedrock.event("messageStop", {"stopReason": "max_tokens"}),
            bedrock.event("metadata", {"usage": {"inputTokens": 3, "outputTokens": 9}}),
        ]
    )
    bedrock.serve(body)
    with pytest.raises(TruncatedToolCallError) as caught:
        client().complete("bedrock/m", "hi")
    assert [call.id for call in caught.value.calls] == ["t2"]
    response = caught.value.partial
    assert response is not None
    assert [(c.id, c.input) for c in response.tool_calls] == [("t1", {"a": 1})]
    assert [t["id"] for t in response.metadata["truncated_tool_calls"]] == ["t2"]
    assert response.stop_reason == "max_tokens"


def test_a_stream_cut_inside_a_tool_call_keeps_no_call_in_its_partial(client, bedrock):
    frames = bedrock.frames_of(bedrock.recorded("tool_use_cut_at_max_tokens.eventstream"))
    upto = next(i for i, f in enumerate(frames) if b'"Par' in f)
    bedrock.serve(b"".join(frames[: upto + 1]))  # the connection ends inside the input
    with pytest.raises(ModelError) as caught:
        client().complete("bedrock/m", "weather in Paris?")
    partial = caught.value.partial
    assert partial is not None
    assert partial.text.startswith("<thinking> To find the temperature")
    assert partial.tool_calls == []
