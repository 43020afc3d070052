"""The ``modelplug_embed`` wrapper: a CLIENT span ``embeddings {model}`` per call."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Generator
from typing import TYPE_CHECKING

from modelplug import describe_error, redact

from . import names
from .attributes import input_tokens, provider_name, route_facts
from .instruments import instruments

if TYPE_CHECKING:
    from modelplug import CallContext, Embeddings, EmbedRequest, Route
    from opentelemetry.trace import Span

HookWrapper = Generator[None, "Awaitable[Embeddings] | None", "Awaitable[Embeddings] | None"]


def wrapper(route: Route, request: EmbedRequest, client: CallContext) -> HookWrapper:
    from opentelemetry import trace

    ins = instruments()
    facts = route_facts(route, "embeddings")
    attributes = dict(facts.attributes)
    metric = facts.metric
    if request.dimensions is not None:
        attributes[names.DIMENSIONS] = request.dimensions
    encoding = request.extra.get("encoding_format")
    if isinstance(encoding, str):
        attributes[names.REQUEST_ENCODING_FORMATS] = [encoding]
    attributes["modelplug.embed.inputs"] = len(request.inputs)
    started = time.perf_counter()
    span = ins.tracer.start_span(facts.span_name, kind=trace.SpanKind.CLIENT, attributes=attributes)
    try:
        waiting = yield
    except BaseException as exc:
        _failed(span, client, route, exc, started, metric)
        raise
    if waiting is None:
        span.end()
        return None
    return _traced(waiting, span, client, route, started, metric)


async def _traced(
    waiting: Awaitable[Embeddings],
    span: Span,
    client: CallContext,
    route: Route,
    started: float,
    metric: dict[str, object],
) -> Embeddings:
    try:
        embeddings = await waiting
    except BaseException as exc:
        _failed(span, client, route, exc, started, metric)
        raise
    ins = instruments()
    usage = embeddings.usage
    span.set_attribute(names.INPUT_TOKENS, input_tokens(usage))
    span.set_attribute(names.USAGE_REPORTED, usage.reported)
    model = embeddings.model
    # Core fills Embeddings.model ("provider/model") after this hook: a plugin that set
    # it names the model its server answered with.
    span.set_attribute(
        names.RESPONSE_MODEL, model.partition("/")[2] or model if model else route.model
    )
    if embeddings.vectors:
        span.set_attribute(names.DIMENSIONS, len(embeddings.vectors[0]))
    cost = embeddings.cost or client.price(route, usage)
    if cost is not None and cost.currency == "USD":
        span.set_attribute(names.COST, float(cost.amount))
    span.end()
    ins.duration.record(time.perf_counter() - started, metric)  # type: ignore[arg-type]
    if usage.reported:
        ins.tokens.record(input_tokens(usage), route_facts(route, "embeddings").input_tokens)
    return embeddings


def _failed(
    span: Span,
    client: CallContext,
    route: Route,
    exc: BaseException,
    started: float,
    metric: dict[str, object],
) -> None:
    from opentelemetry.trace import Status, StatusCode

    error_class = client.classify(exc, route)
    span.set_attribute(names.ERROR_TYPE, error_class.kind)
    if error_class.status is not None:
        span.set_attribute(names.ERROR_STATUS, error_class.status)
    span.set_status(Status(StatusCode.ERROR, redact(describe_error(exc, error_class))))
    span.end()
    instruments().duration.record(
        time.perf_counter() - started,
        {**metric, names.ERROR_TYPE: error_class.kind},  # type: ignore[dict-item]
    )


__all__ = ["provider_name", "wrapper"]
