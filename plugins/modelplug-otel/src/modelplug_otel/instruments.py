"""The tracer and the four histograms, made once from the global providers.

The API's proxy tracer and meter forward to whatever SDK is configured later, so they
are made on first use and kept: no lookup per call.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from . import names

if TYPE_CHECKING:
    from opentelemetry.metrics import Histogram
    from opentelemetry.trace import Tracer

SCOPE = "modelplug-otel"


class Instruments:
    __slots__ = ("duration", "time_per_chunk", "time_to_first_chunk", "tokens", "tracer")

    def __init__(self) -> None:
        from opentelemetry import metrics, trace

        from . import __version__

        self.tracer: Tracer = trace.get_tracer(SCOPE, __version__)
        meter = metrics.get_meter(SCOPE, __version__)
        self.duration: Histogram = meter.create_histogram(
            names.DURATION,
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=names.DURATION_BUCKETS,
        )
        self.tokens: Histogram = meter.create_histogram(
            names.TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=[float(b) for b in names.TOKEN_BUCKETS],
        )
        self.time_to_first_chunk: Histogram = meter.create_histogram(
            names.TIME_TO_FIRST_CHUNK,
            unit="s",
            description="Time to receive the first chunk of a streamed answer.",
            explicit_bucket_boundaries_advisory=names.DURATION_BUCKETS,
        )
        self.time_per_chunk: Histogram = meter.create_histogram(
            names.TIME_PER_OUTPUT_CHUNK,
            unit="s",
            description="Time per output chunk after the first one.",
            explicit_bucket_boundaries_advisory=names.CHUNK_BUCKETS,
        )


@cache
def instruments() -> Instruments:
    return Instruments()
