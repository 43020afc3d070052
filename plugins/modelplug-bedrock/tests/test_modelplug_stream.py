"""Recorded ConverseStream answers through a real loopback socket: text, tool calls with
input deltas, reasoning with its signature, redacted reasoning, usage with the cache,
and the end of a stream."""

from __future__ import annotations

import pytest
from modelplug import ModelError
from modelplug.contract.types import Done, TextDelta, ThinkingBlock, ThinkingDelta, ToolCallStart


def run(client, spec="bedrock/m"):
    events = list(client.stream(spec, "hi"))
    assert isinstance(events[-1], Done)
    return events, events[-1].response


def test_recorded_text_streams_its_deltas_and_reports_usage_and_latency(client, bedrock):
    bedrock.serve(bedrock.recorded("text.eventstream"))
    events, response = run(client())
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas[:2] == ["The", " capital of France is Paris."]
    assert response.text == "".join(deltas)
    assert response.stop_reason == "end_turn"
    assert (response.usage.input, response.usage.output, response.usage.reported) == (13, 82, True)
    assert response.metadata["latency_ms"] == 522


def test_a_tool_call_is_announced_and_its_input_deltas_joined(client, bedrock):
    bedrock.serve(bedrock.recorded("tool_use.eventstream"))
    events, response = run(client())
    (start,) = [e for e in events if isinstance(e, ToolCallStart)]
    assert start.name == "get_temperature"
    assert start.id.startswith("tooluse_")
    (call,) = response.tool_calls
    assert (call.id, call.name, call.input) == (start.id, "get_temperature", {"city": "Paris"})
    assert response.stop_reason == "tool_use"
    assert response.text.startswith("<thinking> To find the temperature")
    assert (response.usage.input, response.usage.output) == (471, 91)


def test_reasoning_streams_as_thinking_and_keeps_its_signature_for_replay(client, bedrock):
    bedrock.serve(bedrock.recorded("reasoning.eventstream"))
    events, response = run(client())
    thought = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thought.startswith("The user has greeted me with")
    block = response.message.content[0]
    assert isinstance(block, ThinkingBlock)
    assert block.text == thought
    assert block.signature and block.signature.startswith("Eu0CCkgIBxAB")
    assert block.wire == {
        "reasoningContent": {"reasoningText": {"text": thought, "signature": block.signature}}
    }
    assert block.origin == "bedrock/m"
    assert response.text == "Hello! It's nice to meet you. How can I help you today?"


def test_redacted_reasoning_is_kept_whole_and_shows_nothing(client, bedrock):
    bedrock.serve(bedrock.recorded("redacted.eventstream"))
    events, response = run(client())
    assert not [e for e in events if isinstance(e, ThinkingDelta)]
    first, second, text = response.message.content
    assert isinstance(first, ThinkingBlock) and first.redacted and first.text == ""
    assert first.wire["reasoningContent"]["redactedContent"].startswith("RXRrRUNrZ0lCeEFCR0FJ")
    assert second.wire != first.wire
    assert text.text.startswith("I notice you've sent what appears to be some")


def test_cache_reads_and_writes_are_counted_apart_from_the_input(client, bedrock):
    body = b"".join(
        [
            bedrock.event("messageStart", {"role": "assistant"}),
            bedrock.event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "ok"}}),
            bedrock.event("contentBlockStop", {"contentBlockIndex": 0}),
            bedrock.event("messageStop", {"stopReason": "max_tokens"}),
            bedrock.event(
                "metadata",
                {
                    "usage": {
                        "inputTokens": 4,
                        "outputTokens": 1,
                        "totalTokens": 1805,
                        "cacheReadInputTokens": 1200,
                        "cacheWriteInputTokens": 600,
                    },
                    "metrics": {"latencyMs": 12},
                },
            ),
        ]
    )
    bedrock.serve(body)
    _, response = run(client())
    usage = response.usage
    assert (usage.input, usage.cache_read, usage.cache_write, usage.output) == (4, 1200, 600, 1)
    assert usage.total == 1805
    assert response.stop_reason == "max_tokens"


@pytest.mark.parametrize(
    ("name", "kind", "retryable"),
    [
        ("throttlingException", "rate_limit", True),
        ("modelStreamErrorException", "transient", True),
        ("serviceUnavailableException", "overloaded", True),
        ("validationException", "bad_request", False),
        ("internalServerException", "transient", True),
    ],
)
def test_an_exception_event_mid_stream_is_classified_and_carries_the_text_so_far(
    client, bedrock, name, kind, retryable
):
    frames = bedrock.frames_of(bedrock.recorded("text.eventstream"))
    body = b"".join([*frames[:3], bedrock.exception(name, f"{name} happened"), *frames[3:]])
    bedrock.serve(body)
    shown = []
    with pytest.raises(ModelError) as caught:
        for event in client().stream("bedrock/m", "hi"):
            if isinstance(event, TextDelta):
                shown.append(event.text)
    error = caught.value
    assert error.error_class.kind == kind
    assert error.error_class.retryable is retryable
    assert f"{name} happened" in str(error)
    assert error.partial is not None
    assert error.partial.text == "".join(shown) == "The capital of France is Paris."


def test_a_stream_cut_inside_a_frame_is_transient_with_the_partial(client, bedrock, wire_server):
    frames = bedrock.frames_of(bedrock.recorded("text.eventstream"))
    half = frames[3][: len(frames[3]) // 2]
    wire_server.add(
        [*frames[:3], half], path="/model/m/converse-stream", content_type=bedrock.content_type
    )
    with pytest.raises(ModelError) as caught:
        client().complete("bedrock/m", "hi")
    error = caught.value
    assert error.error_class.kind == "transient"
    assert "mid-frame" in str(error)
    assert error.partial.text == "The capital of France is Paris."


def test_a_stream_that_ends_after_message_stop_without_metadata_is_whole(client, bedrock):
    frames = bedrock.frames_of(bedrock.recorded("text.eventstream"))
    bedrock.serve(b"".join(frames[:-1]))  # no metadata event
    _, response = run(client())
    assert response.text.endswith('"The City of Love."')
    assert response.usage.reported is False  # estimated: Bedrock sent no usage


def test_an_inference_profile_id_is_sent_url_encoded(client, bedrock, wire_server):
    model = "us.anthropic.claude-sonnet-4-6-v1:0"
    bedrock.serve(
        bedrock.recorded("text.eventstream"), model="us.anthropic.claude-sonnet-4-6-v1%3A0"
    )
    run(client(), spec=f"bedrock/{model}")
    (request,) = wire_server.requests
    assert request.path == "/model/us.anthropic.claude-sonnet-4-6-v1%3A0/converse-stream"
    assert request.headers["accept"] == "application/vnd.amazon.eventstream"


def test_a_whole_frame_whose_payload_is_not_json_is_a_classified_error(client, bedrock):
    frames = bedrock.frames_of(bedrock.recorded("text.eventstream"))
    broken = bedrock.encode_frame(
        {":event-type": "contentBlockDelta", ":message-type": "event"}, b'{"delta": {"te'
    )
    bedrock.serve(b"".join([*frames[:3], broken, *frames[3:]]))
    with pytest.raises(ModelError) as caught:
        client().complete("bedrock/m", "hi")
    error = caught.value
    assert error.error_class.kind == "transient"
    assert "not JSON" in str(error)
    assert error.partial.text == "The capital of France is Paris."
    assert error.__cause__ is None or not isinstance(error.__cause__, ValueError)
