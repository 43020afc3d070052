"""The gateway's SERVER span: one per request, its parent the caller's ``traceparent``.

The span is made current for the block, so the call's CLIENT span (opened when the
gateway's Client call begins, inside the block) is its child.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.trace import Span


@contextmanager
def server_span(
    headers: Mapping[str, str] | Any, name: str, attributes: Mapping[str, Any] | None = None
) -> Iterator[Span]:
    """A SERVER span named ``name`` (e.g. ``"POST /v1/chat/completions"``) around
    serving one request.

    :param headers: the request's headers (a mapping of lower-case names, or ASGI's
        list of ``(bytes, bytes)`` pairs); the globally configured propagator (W3C
        trace context by default) reads ``traceparent``/``tracestate`` from them.
    :param attributes: more span attributes (``http.request.method``, ``url.path``...).
    An exception leaving the block marks the span as failed and is re-raised.
    """
    from opentelemetry import propagate, trace

    from .instruments import instruments

    parent = propagate.extract(_carrier(headers))
    tracer = instruments().tracer
    with tracer.start_as_current_span(
        name,
        context=parent,
        kind=trace.SpanKind.SERVER,
        attributes=dict(attributes or {}),
        record_exception=False,
    ) as span:
        yield span


def _carrier(headers: Mapping[str, str] | Any) -> dict[str, str]:
    if isinstance(headers, Mapping):
        return {str(k).lower(): str(v) for k, v in headers.items()}
    carrier: dict[str, str] = {}
    for key, value in headers:
        k = key.decode("latin-1") if isinstance(key, bytes) else str(key)
        v = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        carrier[k.lower()] = v
    return carrier


def server_response(span: Span, status: int) -> None:
    """Record the HTTP status a server answered on its SERVER span, as the HTTP
    conventions say: ``http.response.status_code``; a 5xx also sets ``error.type`` to the
    status and marks the span failed (a 4xx is the caller's error, not the server's)."""
    span.set_attribute("http.response.status_code", status)
    if status >= 500:
        from opentelemetry.trace import Status, StatusCode

        span.set_attribute("error.type", str(status))
        span.set_status(Status(StatusCode.ERROR))
