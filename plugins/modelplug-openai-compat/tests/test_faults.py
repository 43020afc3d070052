"""Faults on the wire: refused, reset, 429, 5xx, context overflow, malformed, huge, stalled."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from email.utils import formatdate
from pathlib import Path

import pytest
from modelplug import ModelError
from modelplug.contract.types import TextDelta
from modelplug_kit.testing import refused_url

RECORDINGS = Path(__file__).parent / "recordings"


def fail(client, spec="wire/m"):
    seen = []
    with pytest.raises(ModelError) as caught:
        for event in client.stream(spec, "hi"):
            seen.append(event)
    return caught.value, seen


def test_refused_connection_is_unreachable_and_not_retryable(make_client):
    import modelplug_openai_compat

    base = refused_url() + "/v1"
    client = make_client(
        modelplug_openai_compat,
        config={"providers": {"box": {"type": "openai-compatible", "base_url": base}}},
    )
    error, _ = fail(client, "box/m")
    assert error.kind == "unreachable"
    assert not error.retryable
    assert f"Cannot reach box at {base}. Is the server running?" in str(error)


def test_reset_mid_stream_is_transient_and_carries_the_partial_output(compat, wire_server):
    wire_server.add_file(RECORDINGS / "openai_text.sse", drop_after=3)
    error, seen = fail(compat())
    assert error.kind == "transient" and error.retryable
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == "Sockets wait in"
    assert error.partial is not None
    assert error.partial.text == "Sockets wait in"
    assert error.partial.usage.reported is False


def test_429_reads_retry_after_seconds(compat, wire_server):
    wire_server.add_json(
        {"error": {"message": "Rate limit reached", "type": "requests"}},
        status=429,
        headers={"Retry-After": "7"},
    )
    error, _ = fail(compat())
    assert error.kind == "rate_limit" and error.retryable
    assert error.error_class.retry_after == 7
    assert error.error_class.status == 429
    assert "Rate limit reached" in str(error)


def test_429_reads_retry_after_as_an_http_date(compat, wire_server):
    at = int(time.time()) + 30  # an HTTP date is in whole seconds
    wire_server.add_json(
        {"error": "slow down"}, status=429, headers={"Retry-After": formatdate(at, usegmt=True)}
    )
    before = time.time()
    error, _ = fail(compat())
    after = time.time()
    # The seconds from when the answer was read to that date, however long the call took.
    assert error.error_class.retry_after is not None
    assert at - after <= error.error_class.retry_after <= at - before


def test_429_from_a_fair_share_proxy_names_the_queue(compat, wire_server):
    wire_server.add_json(
        {"error": {"message": "backend saturated", "reason": "rejected"}},
        status=429,
        headers={
            "Retry-After": "10",
            "X-RateLimit-Capacity": "4",
            "X-RateLimit-InFlight": "4",
            "X-RateLimit-Waiting": "2",
        },
    )
    error, _ = fail(compat())
    assert "4 of 4 slots busy, 2 waiting ahead, reason: rejected" in str(error)
    assert "4 of 4 slots busy" in error.error_class.reason
    assert error.error_class.retry_after == 10


def test_503_is_transient_and_retryable(compat, wire_server):
    wire_server.add("upstream unavailable", status=503, content_type="text/plain")
    error, _ = fail(compat())
    assert (error.kind, error.retryable, error.error_class.status) == ("transient", True, 503)
    assert "upstream unavailable" in str(error)


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "the request exceeds the available context size, try increasing it"),
        (400, "This model's maximum context length is 8192 tokens."),
        (413, "prompt is too long"),
    ],
)
def test_context_length_errors_are_overflow_with_a_hint(compat, wire_server, status, message):
    wire_server.add_json(
        {"error": {"code": status, "message": message, "type": "exceed_context_size_error"}},
        status=status,
    )
    error, _ = fail(compat())
    assert error.kind == "context_overflow" and not error.error_class.fallback
    assert 'Set context_window under [models."wire/m"] to what the server loaded' in str(error)
    assert "compacted" not in str(error)  # nothing compacts a conversation on its own


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, "auth"),
        (403, "auth"),
        (404, "not_found"),
        (408, "transient"),
        (409, "transient"),
        (400, "bad_request"),
    ],
)
def test_status_kinds(compat, wire_server, status, kind):
    wire_server.add_json({"error": {"message": "nope"}}, status=status)
    error, _ = fail(compat())
    assert error.kind == kind
    assert error.retryable == (status in (408, 409))


def test_malformed_json_line_is_an_error_with_the_partial(compat, wire_server):
    wire_server.add_sse(
        [{"choices": [{"delta": {"content": "ok"}}]}, '{"choices": [tru'], done=True
    )
    error, _ = fail(compat())
    assert "not a JSON object" in str(error) and "tru" in str(error)
    assert error.partial is not None and error.partial.text == "ok"


def test_an_error_event_mid_stream_is_classified(compat, wire_server):
    wire_server.add_sse(
        [
            {"choices": [{"delta": {"content": "par"}}]},
            {"error": {"message": "Provider disconnected", "code": 502}},
        ]
    )
    error, _ = fail(compat())
    assert (error.kind, error.retryable) == ("transient", True)
    assert "Provider disconnected" in str(error)
    assert error.partial is not None and error.partial.text == "par"


def test_a_stream_that_ends_without_finishing_is_transient(compat, wire_server):
    wire_server.add_sse([{"choices": [{"delta": {"content": "half"}}]}])
    error, _ = fail(compat())
    assert error.kind == "transient" and "ended before" in str(error)
    assert error.partial is not None and error.partial.text == "half"


def test_a_two_mebibyte_event(compat, wire_server):
    # Text that never repeats itself (one letter repeated would be a loop the repetition
    # guard cuts): deterministic base64 of 1.5 MiB of SHAKE-256 output, 2 MiB of text.
    big = base64.b64encode(hashlib.shake_256(b"two mebibytes").digest(3 * 512 * 1024)).decode()
    event = json.dumps({"choices": [{"delta": {"content": big}, "finish_reason": "stop"}]})
    wire_server.add(
        [f"data: {event}\n\n".encode()[i : i + 65536] for i in range(0, len(event) + 8, 65536)]
        + [b"data: [DONE]\n\n"]
    )
    response = compat().complete("wire/m", "hi")
    assert response.text == big
    assert response.usage.reported is False
    assert response.usage.output == len(big) // 4


def test_a_stalled_server_raises_transient_after_read_timeout(compat, wire_server):
    # The rest would come 30 s later: what ends the call is the timeout the error names.
    wire_server.add(
        [b'data: {"choices":[{"delta":{"content":"a"}}]}\n\n', (30.0, b"data: [DONE]\n\n")]
    )
    client = compat({"openai-compat": {"read_timeout": 0.5}})
    error, _ = fail(client)
    assert error.kind == "transient" and error.retryable
    assert "sent nothing for 0.5 s (read_timeout in [openai-compat])" in str(error)
    assert error.partial is not None and error.partial.text == "a"
    wire_server.stopping.set()  # release the server thread waiting out its delay


def test_a_server_that_never_answers_times_out(compat, wire_server):
    # The answer would come 30 s later: what ends the call is the timeout the error names.
    wire_server.add(b"data: [DONE]\n\n", stall=30.0)
    client = compat({"openai-compat": {"first_byte_timeout": 0.5}})
    error, _ = fail(client)
    assert error.kind == "transient" and error.retryable and error.partial is None
    assert "sent no answer within 0.5 s (first_byte_timeout in [openai-compat])" in str(error)
    # The request went out once: the wait was for its answer, and it was not resent.
    assert [r.path for r in wire_server.requests] == ["/v1/chat/completions"]
    wire_server.stopping.set()


def test_a_redirect_is_an_error_naming_the_status_not_a_retry(compat, wire_server):
    wire_server.add(
        b"", status=307, headers={"location": "https://elsewhere.example/v1/chat/completions"}
    )
    with pytest.raises(ModelError) as caught:
        compat().complete("wire/m", "hi")
    assert caught.value.error_class.kind == "other"
    assert not caught.value.error_class.retryable
    assert "307" in str(caught.value)
