"""server_span: the gateway's SERVER span, its parent the caller's ``traceparent`` (W3C
trace context), with the call's CLIENT span under it."""

from __future__ import annotations

import asyncio
from typing import Any

import modelplug_otel
import pytest
from modelplug.testing import FakeModel, text
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
PARENT_ID = 0x00F067AA0BA902B7


def _headers() -> dict[str, str]:
    # The W3C propagator writes the header the caller would send.
    carrier: dict[str, str] = {}
    parent = trace.NonRecordingSpan(
        trace.SpanContext(TRACE_ID, PARENT_ID, is_remote=True, trace_flags=trace.TraceFlags(1))
    )
    TraceContextTextMapPropagator().inject(carrier, trace.set_span_in_context(parent))
    assert carrier["traceparent"].startswith("00-4bf92f35")
    return carrier


def test_the_server_span_continues_the_callers_trace_and_holds_the_call(
    make_client: Any, spans: Any
) -> None:
    client = make_client(FakeModel([text("hello")]), modelplug_otel)

    async def serve() -> str:
        with modelplug_otel.server_span(_headers(), "POST /v1/chat/completions"):
            response = await client.acomplete("fake/m", "hi")
        return response.text

    assert asyncio.run(serve()) == "hello"
    finished = spans()
    (server,) = [s for s in finished if s.kind is SpanKind.SERVER]
    (call,) = [s for s in finished if s.kind is SpanKind.CLIENT]
    assert server.name == "POST /v1/chat/completions"
    assert server.context.trace_id == TRACE_ID and server.parent.span_id == PARENT_ID
    assert server.parent.is_remote
    assert call.parent.span_id == server.context.span_id
    assert call.context.trace_id == TRACE_ID


def test_asgi_header_pairs_are_read_too_and_a_failure_marks_the_span(spans: Any) -> None:
    pairs = [(k.encode(), v.encode()) for k, v in _headers().items()]
    with pytest.raises(RuntimeError), modelplug_otel.server_span(pairs, "POST /v1/messages"):
        raise RuntimeError("boom")
    (server,) = spans()
    assert server.context.trace_id == TRACE_ID
    assert server.status.status_code is StatusCode.ERROR


def test_without_a_traceparent_the_server_span_starts_a_trace(spans: Any) -> None:
    with modelplug_otel.server_span({}, "GET /v1/models"):
        pass
    (server,) = spans()
    assert server.parent is None and server.kind is SpanKind.SERVER
