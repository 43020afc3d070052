"""Errors: status answers, error events, failed responses and cut streams end as
classified errors (the class core's ``Client.classify`` reads first), with the output
produced so far."""

from __future__ import annotations

import json

import pytest
from modelplug import ModelError
from modelplug.contract.types import TextBlock, ThinkingBlock
from modelplug_openai.errors import rate_limit_reset


def fail(client, spec="wire/gpt-5", request="hi", **fields):
    with pytest.raises(ModelError) as info:
        list(client.stream(spec, request, **fields))
    return info.value


def error_body(message, type_, code):
    return json.dumps({"error": {"message": message, "type": type_, "param": None, "code": code}})


def test_a_429_is_a_rate_limit_waiting_for_the_exhausted_limits_reset(responses, wire_server):
    wire_server.add(
        error_body("Rate limit reached", "requests", "rate_limit_exceeded"),
        status=429,
        content_type="application/json",
        headers={
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": "1m6s",
            "x-ratelimit-remaining-tokens": "100",
            "x-ratelimit-reset-tokens": "20ms",
        },
    )
    client = responses()
    error = fail(client)
    assert client.classify(error, None) == error.error_class  # what policies read
    assert (error.error_class.kind, error.error_class.retryable) == ("rate_limit", True)
    assert error.error_class.retry_after == 66.0  # the exhausted limit's reset


def test_retry_after_header_wins_over_the_reset_headers(responses, wire_server):
    wire_server.add(
        error_body("slow down", "requests", "rate_limit_exceeded"),
        status=429,
        content_type="application/json",
        headers={"retry-after": "3", "x-ratelimit-reset-tokens": "6m0s"},
    )
    assert fail(responses()).error_class.retry_after == 3.0


def test_rate_limit_reset_reads_openai_durations():
    assert rate_limit_reset({"x-ratelimit-reset-tokens": "1h2m3.5s"}) == 3723.5
    assert (
        rate_limit_reset({"X-RateLimit-Reset-Requests": "20ms", "x-ratelimit-reset-tokens": "2s"})
        == 2.0
    )
    assert rate_limit_reset({"x-ratelimit-reset-tokens": "soon"}) is None


def test_insufficient_quota_is_quota_not_a_rate_limit(responses, wire_server):
    wire_server.add(
        error_body("You exceeded your current quota", "insufficient_quota", "insufficient_quota"),
        status=429,
        content_type="application/json",
    )
    error_class = fail(responses()).error_class
    assert (error_class.kind, error_class.retryable, error_class.fallback) == ("quota", False, True)


@pytest.mark.parametrize(
    ("status", "type_", "code", "kind"),
    [
        (400, "invalid_request_error", "context_length_exceeded", "context_overflow"),
        (401, "invalid_request_error", "invalid_api_key", "auth"),
        (404, "invalid_request_error", "model_not_found", "not_found"),
        (500, "server_error", None, "transient"),
        (503, "server_error", None, "transient"),
    ],
)
def test_status_answers_are_classified(responses, wire_server, status, type_, code, kind):
    wire_server.add(
        error_body("the server says no", type_, code),
        status=status,
        content_type="application/json",
    )
    error = fail(responses())
    assert error.error_class.kind == kind
    assert error.error_class.status == status
    if kind == "context_overflow":
        assert error.error_class.fallback is False
        assert "context_window" in str(error)
        # Nothing compacts a conversation on its own: the hint must not promise it.
        assert "is compacted" not in str(error) and "shorten or compact" in str(error)


def test_a_key_echoed_in_an_error_is_masked(responses, wire_server, wire):
    wire_server.add(
        error_body(
            f"Incorrect API key provided: {wire.KEY}", "invalid_request_error", "invalid_api_key"
        ),
        status=401,
        content_type="application/json",
    )
    error = fail(responses())
    assert wire.KEY not in str(error)
    assert error.error_class.kind == "auth"


def test_an_error_event_is_classified_by_its_code(responses, wire_server, recorded):
    wire_server.add_file(recorded / "error_event.sse")
    error = fail(responses())
    assert error.error_class.kind == "quota"
    assert "exceeded your current quota" in str(error)


def test_a_flat_error_event_server_error_is_transient(responses, wire_server):
    # The documented shape of the error event: code and message at the top level.
    wire_server.add_sse(
        [
            {
                "type": "error",
                "code": "server_error",
                "message": "The server had an error",
                "param": None,
                "sequence_number": 1,
            }
        ],
        event_names=True,
    )
    error_class = fail(responses()).error_class
    assert (error_class.kind, error_class.retryable) == ("transient", True)


def test_a_failed_response_is_classified_by_its_error_code(responses, wire_server, recorded):
    wire_server.add_file(recorded / "failed.sse")
    error = fail(responses())
    assert error.error_class.kind == "rate_limit"
    assert "tokens per min" in str(error)


def test_a_failed_server_error_keeps_the_text_so_far(responses, wire_server, wire):
    created = wire.recorded_events("text.sse")[:6]  # created ... the first text delta
    failed = {
        "type": "response.failed",
        "response": {
            "id": "resp_x",
            "status": "failed",
            "error": {"code": "server_error", "message": "The model failed"},
            "output": [],
        },
    }
    wire_server.add_sse([*created, failed], event_names=True)
    error = fail(responses())
    assert error.error_class.kind == "transient"
    shown = "".join(e["delta"] for e in created if e["type"] == "response.output_text.delta")
    assert shown and error.partial is not None and error.partial.text == shown


def test_a_stream_cut_before_its_end_is_transient_with_the_partial_output(
    responses, wire_server, recorded, wire
):
    # The reasoning item completes, then the connection is reset during the call.
    events = wire.recorded_events("reasoning_tool_turn1.sse")
    keep = next(
        i
        for i, e in enumerate(events)
        if e["type"] == "response.output_item.added" and e["output_index"] == 1
    )
    sent = wire_server.add_sse(events[: keep + 3], event_names=True)
    # Reset after a pause, so the events sent before the reset are read, not discarded.
    sent.chunks.append((0.3, b""))
    sent.drop_after = len(sent.chunks)
    error = fail(responses(), "wire/gpt-5.1-codex-max")
    assert error.error_class.kind == "transient" and error.error_class.retryable
    thinking = error.partial.message.content[0]
    assert isinstance(thinking, ThinkingBlock)
    assert thinking.wire == events[keep - 1]["item"]  # the completed item, as it came
    assert error.partial.stop_reason == "other"
    assert error.partial.usage.reported is False


def test_a_stream_that_ends_without_its_final_event_is_transient(responses, wire_server, wire):
    events = [e for e in wire.recorded_events("text.sse") if e["type"] != "response.completed"]
    wire_server.add_sse(events, event_names=True)
    error = fail(responses())
    assert error.error_class.kind == "transient"
    assert "ended before its final event" in str(error)
    assert error.partial.message.content == [TextBlock(text="The final result is **570**.")]


def test_unreadable_bytes_are_a_classified_error(responses, wire_server):
    wire_server.add(b"event: response.output_text.delta\ndata: {not json\n\n")
    error = fail(responses())
    assert error.error_class.kind == "transient"
    assert "cannot read" in str(error)


def test_connection_refused_is_unreachable(make_client):
    from modelplug_kit.testing import refused_url

    client = make_client(
        "modelplug-openai",
        entry_points=True,
        config={
            "providers": {
                "wire": {
                    "type": "openai-responses",
                    "base_url": refused_url() + "/v1",
                    "api_key_env": "K",
                }
            }
        },
        environ={"K": "sk-x"},
    )
    error = fail(client)
    assert (error.error_class.kind, error.error_class.fallback) == ("unreachable", True)
