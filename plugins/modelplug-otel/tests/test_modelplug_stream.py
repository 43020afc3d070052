"""modelplug_stream: one CLIENT span per call with the conventions' attributes, a child
span for its attempt, and the four metrics."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import modelplug_otel
import pytest
from modelplug import ModelError
from modelplug.contract.types import Price, ToolCallStart, Usage
from modelplug.testing import FakeModel, text, tool_use
from opentelemetry.trace import SpanKind, StatusCode


def test_a_chat_call_is_one_client_span_named_for_operation_and_model(
    make_client: Any, spans: Any, points: Any
) -> None:
    usage = Usage(input=10, output=5, cache_read=100, cache_write=7)
    fake = FakeModel([text("hello", usage=usage)], price=Price(input=Decimal(1), output=Decimal(2)))
    client = make_client(fake, modelplug_otel)

    response = client.complete("fake/m", "hi", max_tokens=64, temperature=0.5)

    assert response.text == "hello"
    call, attempt = _call_and_attempts(spans())
    assert call.name == "chat m" and call.kind is SpanKind.CLIENT
    a = dict(call.attributes)
    assert a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.provider.name"] == "fake"
    assert a["gen_ai.request.model"] == "m"
    assert a["gen_ai.response.model"] == "m"
    assert a["gen_ai.request.max_tokens"] == 64
    assert a["gen_ai.request.temperature"] == 0.5
    assert a["gen_ai.request.stream"] is True
    # The conventions count cached tokens inside the input tokens.
    assert a["gen_ai.usage.input_tokens"] == 117
    assert a["gen_ai.usage.cache_read.input_tokens"] == 100
    assert a["gen_ai.usage.cache_creation.input_tokens"] == 7
    assert a["gen_ai.usage.output_tokens"] == 5
    assert a["gen_ai.response.finish_reasons"] == ("stop",)
    assert a["modelplug.cost.usd"] == pytest.approx(float(response.cost.amount))
    assert "gen_ai.system" not in a and "gen_ai.input.messages" not in a
    assert call.status.status_code is StatusCode.UNSET
    assert attempt == []  # one attempt: the call's span is the attempt's

    (duration,) = points("gen_ai.client.operation.duration")
    assert duration.count == 1 and duration.attributes["gen_ai.request.model"] == "m"
    assert list(duration.explicit_bounds)[:3] == [0.01, 0.02, 0.04]


def test_token_usage_is_recorded_by_token_type_with_the_conventions_buckets(
    make_client: Any, points: Any
) -> None:
    fake = FakeModel([text("hello", usage=Usage(input=10, output=5, cache_read=3))])
    make_client(fake, modelplug_otel).complete("fake/m", "hi")

    by_type = {p.attributes["gen_ai.token.type"]: p for p in points("gen_ai.client.token.usage")}
    assert by_type["input"].sum == 13 and by_type["output"].sum == 5
    assert list(by_type["input"].explicit_bounds)[:4] == [1, 4, 16, 64]
    (first,) = points("gen_ai.client.operation.time_to_first_chunk")
    assert first.count == 1
    assert list(first.explicit_bounds)[-1] == 81.92


def test_a_stream_with_many_chunks_records_the_time_per_output_chunk(
    make_client: Any, points: Any
) -> None:
    fake = FakeModel([text("one two three four", usage=Usage(input=1, output=4))])
    make_client(fake, modelplug_otel).complete("fake/m", "hi")

    (per_chunk,) = points("gen_ai.client.operation.time_per_output_chunk")
    assert per_chunk.count == 1
    assert list(per_chunk.explicit_bounds)[:2] == [0.01, 0.025]


def test_a_tool_call_answer_says_tool_calls_as_its_finish_reason(
    make_client: Any, spans: Any
) -> None:
    fake = FakeModel([tool_use("lookup", {"q": "x"})])
    client = make_client(fake, modelplug_otel)

    events = list(client.stream("fake/m", "find x", tools=[{"name": "lookup"}]))

    assert any(isinstance(e, ToolCallStart) for e in events)
    call, _ = _call_and_attempts(spans())
    assert call.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)


def test_a_failed_call_sets_error_type_and_the_error_status(
    make_client: Any, spans: Any, points: Any, http_error: Any
) -> None:
    client = make_client(FakeModel([http_error(401)]), modelplug_otel)

    with pytest.raises(ModelError):
        client.complete("fake/m", "hi")

    call, attempts = _call_and_attempts(spans())
    assert call.attributes["error.type"] == "auth"
    assert call.attributes["modelplug.error.status"] == 401
    assert call.status.status_code is StatusCode.ERROR
    assert attempts == []
    (duration,) = points("gen_ai.client.operation.duration")
    assert duration.attributes["error.type"] == "auth"


def test_a_caller_that_stops_reading_ends_the_span_marked_closed_early(
    make_client: Any, spans: Any
) -> None:
    client = make_client(FakeModel([text("a b c d e f")]), modelplug_otel)

    async def read_one() -> str:
        stream = client.astream("fake/m", "hi")
        first = await anext(stream)
        await stream.aclose()  # type: ignore[attr-defined]
        return type(first).__name__

    assert asyncio.run(read_one()) == "TextDelta"
    call, _ = _call_and_attempts(spans())
    assert call.attributes["modelplug.closed_early"] is True
    assert "gen_ai.response.model" not in call.attributes


def test_server_address_and_port_come_from_the_routes_base_url(
    make_client: Any, spans: Any, wire_server: Any
) -> None:
    from modelplug.contract.types import Endpoint, Route
    from modelplug_otel.attributes import route_attributes

    route = Route(
        provider="local",
        model="m",
        endpoint=Endpoint(type="openai-compatible", base_url=f"{wire_server.url}/v1"),
    )
    a = route_attributes(route, "chat")
    assert a["server.address"] == "127.0.0.1" and a["server.port"] == wire_server.port
    anthropic = Route(
        provider="anthropic",
        model="claude",
        endpoint=Endpoint(type="anthropic", base_url="https://api.anthropic.com"),
    )
    b = route_attributes(anthropic, "chat")
    assert b["gen_ai.provider.name"] == "anthropic" and b["server.port"] == 443


def _call_and_attempts(finished: list[Any]) -> tuple[Any, list[Any]]:
    (call,) = [s for s in finished if s.kind is SpanKind.CLIENT]
    attempts = sorted(
        (s for s in finished if s.name.startswith("attempt ")), key=lambda s: s.start_time
    )
    return call, attempts
