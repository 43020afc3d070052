"""One SDK for the whole session (the global providers can be set once): spans to an
in-memory exporter, metrics to an in-memory reader with delta temporality, both read
fresh by each test's fixtures."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

EXPORTER = InMemorySpanExporter()
READER = InMemoryMetricReader(preferred_temporality={Histogram: AggregationTemporality.DELTA})
_provider = TracerProvider()
_provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
trace.set_tracer_provider(_provider)
metrics.set_meter_provider(MeterProvider(metric_readers=[READER]))


class HTTPError(Exception):
    """What an SDK's status error looks like to core's generic classifier."""

    def __init__(self, status: int, retry_after: str | None = None) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status
        self.headers = {"retry-after": retry_after} if retry_after is not None else {}


@pytest.fixture
def spans() -> Callable[[], list[ReadableSpan]]:
    """``spans()``: the spans finished since the test began, in the order they ended."""
    EXPORTER.clear()
    return lambda: list(EXPORTER.get_finished_spans())


@pytest.fixture
def points() -> Callable[[str], list[Any]]:
    """``points(name)``: the histogram points of metric ``name`` recorded since the
    test began."""
    READER.get_metrics_data()  # drop what earlier tests recorded

    seen: dict[str, list[Any]] = {}

    def read(name: str) -> list[Any]:
        # Each collection takes the deltas of every metric: keep them all.
        data = READER.get_metrics_data()
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    seen.setdefault(metric.name, []).extend(metric.data.data_points)
        return list(seen.get(name, []))

    return read


@pytest.fixture
def http_error() -> type[HTTPError]:
    """The status error class the tests' fake providers raise."""
    return HTTPError
