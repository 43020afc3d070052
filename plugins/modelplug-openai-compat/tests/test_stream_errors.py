"""A failure reported inside a 200 stream ends in its classified error, never in an
empty successful Response."""

from __future__ import annotations

from pathlib import Path

import pytest
from modelplug import ModelError

RECORDINGS = Path(__file__).parent / "recordings"


def failure(client, spec="wire/m"):
    with pytest.raises(ModelError) as caught:
        list(client.stream(spec, "hi"))
    return caught.value


def test_llamacpp_error_field_is_context_overflow(compat, wire_server):
    wire_server.add_file(RECORDINGS / "llamacpp_context_error.sse")
    error = failure(compat(), "wire/qwen3-8b")
    assert error.error_class.kind == "context_overflow"
    assert not error.error_class.retryable and not error.error_class.fallback
    assert "exceeds the available context size" in str(error)
    assert "context_window" in str(error)  # the hint to set the real window


def test_an_error_event_after_text_keeps_the_partial_output(compat, wire_server):
    wire_server.add_file(RECORDINGS / "event_error.sse")
    error = failure(compat())
    assert error.error_class.kind == "context_overflow"
    assert error.partial is not None and error.partial.text == "Hel"


def test_openrouter_error_field_in_a_data_line_is_an_error(compat, wire_server):
    wire_server.add_file(RECORDINGS / "openrouter_midstream_error.sse")
    error = failure(compat(), "wire/qwen/qwen3-coder")
    assert "Provider disconnected unexpectedly" in str(error)
    assert error.error_class.kind == "transient" and error.error_class.retryable
    assert error.partial is not None and error.partial.text == "The first"


def test_an_error_field_that_is_not_json_is_still_an_error(compat, wire_server):
    wire_server.add([b"error: the slot was cancelled\n\n", b"data: [DONE]\n\n"])
    error = failure(compat())
    assert "the slot was cancelled" in str(error)
    assert error.error_class.kind == "transient"


def test_an_error_event_keeps_its_type(compat, wire_server):
    wire_server.add_sse(
        [
            {"choices": [{"index": 0, "delta": {"content": "par"}}]},
            {"error": {"type": "insufficient_quota", "message": "out of credit"}},
        ]
    )
    error = failure(compat())
    assert error.error_class.kind == "quota"
    assert not error.error_class.retryable
    assert error.partial is not None and error.partial.text == "par"
