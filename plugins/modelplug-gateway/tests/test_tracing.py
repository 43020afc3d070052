"""With modelplug-otel on, each request is a SERVER span (``POST /v1/chat/completions``)
whose parent is the caller's ``traceparent``, with the call's CLIENT span under it, in
one trace: streamed and not, through the official openai SDK. Without it, no tracer."""

from __future__ import annotations

import time
from typing import Any

import modelplug_otel
import openai
import pytest
from modelplug import Client
from modelplug.contract.types import Usage
from modelplug.testing import FakeModel
from modelplug.testing.fake import reply
from modelplug_gateway.tracing import request_tracer
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
PARENT_ID = 0x00F067AA0BA902B7
TRACEPARENT = f"00-{TRACE_ID:032x}-{PARENT_ID:016x}-01"
HELLO = [{"role": "user", "content": "hello there"}]


@pytest.fixture(scope="module")
def exporter() -> InMemorySpanExporter:
    # The global provider can be set once a process: another test module (the otel
    # plugin's, in one run of everything) may have set it already; then listen to it.
    found = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    assert isinstance(trace.get_tracer_provider(), TracerProvider)
    provider.add_span_processor(SimpleSpanProcessor(found))
    return found


def _spans(exporter: InMemorySpanExporter, kinds: int = 2) -> list[ReadableSpan]:
    """The spans of one request: the server ends its span after the answer is sent, so
    wait (generously) for both kinds."""
    deadline = time.monotonic() + 10
    while True:
        spans = list(exporter.get_finished_spans())
        if len({s.kind for s in spans}) >= kinds or time.monotonic() > deadline:
            return spans
        time.sleep(0.01)


def _fake() -> FakeModel:
    return FakeModel([reply("hi there", usage=Usage(input=3, output=2))])


def _sdk(url: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=url + "/v1",
        api_key="unused",
        max_retries=0,
        default_headers={"traceparent": TRACEPARENT},
    )


@pytest.mark.parametrize("stream", [False, True])
def test_a_request_is_a_server_span_under_the_callers_trace_holding_the_client_span(
    make_gateway: Any, serve: Any, exporter: InMemorySpanExporter, stream: bool
) -> None:
    exporter.clear()
    with serve(make_gateway(_fake(), modelplug_otel)) as url:
        if stream:
            chunks = _sdk(url).chat.completions.create(model="fake/m", messages=HELLO, stream=True)
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            completion = _sdk(url).chat.completions.create(model="fake/m", messages=HELLO)
            text = completion.choices[0].message.content or ""
        spans = _spans(exporter)
    assert text == "hi there"
    (server,) = [s for s in spans if s.kind is SpanKind.SERVER]
    (call,) = [s for s in spans if s.kind is SpanKind.CLIENT]
    assert server.name == "POST /v1/chat/completions"
    assert server.parent is not None and server.parent.is_remote
    assert server.parent.span_id == PARENT_ID
    assert server.context.trace_id == TRACE_ID == call.context.trace_id
    assert call.name == "chat m"
    assert call.parent is not None and call.parent.span_id == server.context.span_id
    attributes = dict(server.attributes or {})
    assert attributes["http.request.method"] == "POST"
    assert attributes["http.route"] == "/v1/chat/completions"
    assert attributes["http.response.status_code"] == 200
    assert attributes["server.address"] == "127.0.0.1"
    assert server.status.status_code is StatusCode.UNSET
    assert dict(call.attributes or {})["gen_ai.request.stream"] is True
    # The server span holds the call: it starts before and ends after it.
    assert server.start_time <= call.start_time and call.end_time <= server.end_time


def test_a_refused_request_is_a_server_span_with_its_status_and_no_call(
    make_gateway: Any, serve: Any, exporter: InMemorySpanExporter
) -> None:
    exporter.clear()
    with serve(make_gateway(_fake(), modelplug_otel, models=["fake/other"])) as url:
        with pytest.raises(openai.NotFoundError):
            _sdk(url).chat.completions.create(model="fake/m", messages=HELLO)
        spans = _spans(exporter, kinds=1)
    (server,) = spans
    assert server.kind is SpanKind.SERVER and server.context.trace_id == TRACE_ID
    assert dict(server.attributes or {})["http.response.status_code"] == 404
    assert server.status.status_code is StatusCode.UNSET  # a 4xx is the caller's


def _client(*plugins: object, environ: dict[str, str] | None = None, **kwargs: Any) -> Client:
    return Client(
        plugins=list(plugins),
        user_config="/nonexistent/modelplug.toml",
        project_dir="/",
        environ=environ or {},
        **kwargs,
    )


def test_without_modelplug_otel_in_the_client_there_is_no_tracer() -> None:
    assert request_tracer(_client(_fake(), entry_points=False)) is None
    assert request_tracer(_client(_fake(), modelplug_otel, entry_points=False)) is not None


def test_an_installed_modelplug_otel_that_is_disabled_traces_nothing() -> None:
    assert request_tracer(_client(entry_points=True)) is not None  # installed: on
    off = _client(entry_points=True, environ={"MODELPLUG_DISABLE": "modelplug-otel"})
    assert request_tracer(off) is None
    only = _client(entry_points=True, environ={"MODELPLUG_PLUGINS": "modelplug-limits"})
    assert request_tracer(only) is None
