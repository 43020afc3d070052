"""One call's telemetry: its CLIENT span, its attempts' child spans and its metrics.

:class:`CallRecord` is made when the call opens and fed by :mod:`modelplug_otel.calls`
at the few moments that matter (a notice, the first output, an attempt re-opened, the
Done, a failure); it never sees the events in between.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from modelplug import Done, describe_error, redact
from opentelemetry.trace import SpanKind

from . import names
from .attributes import (
    FINISH_REASON,
    input_tokens,
    request_attributes,
    response_attributes,
    route_attributes,
    route_facts,
)
from .content import capture_content, input_attributes, output_attributes
from .instruments import instruments

if TYPE_CHECKING:
    from modelplug import CallContext, Notice, Request, Response, Route
    from opentelemetry.context import Context
    from opentelemetry.trace import Span


def _error_status(span: Span, kind: str, message: str) -> None:
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute(names.ERROR_TYPE, kind)
    span.set_status(Status(StatusCode.ERROR, redact(message)))


class CallRecord:
    """The telemetry of one call on ``route`` (see the module)."""

    def __init__(self, route: Route, request: Request, client: CallContext) -> None:
        self.ins = ins = instruments()
        self.route = route
        self.request = request
        self.client = client
        self.facts = facts = route_facts(route, "chat")
        self.capture = capture = capture_content(client)
        self.open = True
        self.first_chunk: float | None = None
        self.previous: CallRecord | None = None  # the call this one was made inside
        self.attempts = 1
        # Attempt 1 is the call's own stream, inside the fallback policy: its span is
        # written, with the call's start time, once a notice says it failed. A call of
        # one attempt has no child span: it is its own (a child would repeat it, at a
        # span's cost).
        self.first_pending = True
        self.answering: tuple[Route, Span | None] = (route, None)
        self._context: Context | None = None
        attributes = facts.call
        options = request_attributes(request)
        if options is not None or capture:
            attributes = {**attributes, **(options or {})}
            if capture:
                attributes.update(input_attributes(request))
        self.started = time.perf_counter()
        self.span = ins.tracer.start_span(
            facts.span_name, kind=SpanKind.CLIENT, attributes=attributes
        )

    @property
    def context(self) -> Context:
        """The call's span as a parent: made only when an attempt span needs it."""
        if self._context is None:
            from opentelemetry import trace

            self._context = trace.set_span_in_context(self.span)
        return self._context

    # -- attempts -------------------------------------------------------------------------

    def attempt_span(self, route: Route, number: int, start_ns: int | None = None) -> Span:
        attributes = route_attributes(route, "chat")
        attributes[names.ATTEMPT] = number
        return self.ins.tracer.start_span(
            f"attempt {number} {route.name}",
            context=self.context,
            attributes=attributes,
            start_time=start_ns,
        )

    def first_failed(self, kind: str, message: str, status: int | None) -> None:
        """The fallback policy said attempt 1 failed (its retry or fallback notice)."""
        if not self.first_pending:
            return
        self.first_pending = False
        # Attempt 1 began with the call: its start time is the call span's (the SDK's
        # spans have one; another's may not, and then the attempt starts now).
        started_ns = getattr(self.span, "start_time", None)
        span = self.attempt_span(self.route, 1, started_ns)
        if status is not None:
            span.set_attribute(names.ERROR_STATUS, status)
        _error_status(span, kind, message)
        span.end()

    def noticed(self, notice: Notice) -> None:
        """A notice before the output: a retry's wait or a fallback's switch."""
        details = notice.details
        if notice.kind == "retry" and details.get("phase") in ("wait", "gave_up"):
            if details.get("model") == self.route.name:
                error = details.get("error")
                self.first_failed(str(error or "other"), notice.message, details.get("status"))
            if notice.delay is not None:
                self.span.add_event("retry wait", {"modelplug.wait.seconds": notice.delay})
        elif notice.kind == "fallback" and details.get("to") and "reason" in details:
            if details.get("from") == self.route.name:
                # The fallback notice names the failure in words only: "_OTHER" is
                # the conventions' error.type for that, the words go beside it.
                self.span.set_attribute(names.ERROR_REASON, str(details["reason"]))
                self.first_failed("_OTHER", notice.message, None)
            self.span.add_event(
                "fallback",
                {"modelplug.from": str(details.get("from")), "modelplug.to": str(details["to"])},
            )

    def reopened(self, route: Route) -> Span:
        """A policy opened another attempt (a retry, a fallback): its child span."""
        # No notice said attempt 1 failed: it never ran (the model asked for was
        # cooling down and the policy started elsewhere).
        self.first_pending = False
        self.attempts += 1
        span = self.attempt_span(route, self.attempts)
        self.answering = (route, span)
        return span

    def attempt_failed(self, span: Span, route: Route, exc: BaseException) -> None:
        error_class = self.client.classify(exc, route)
        if error_class.status is not None:
            span.set_attribute(names.ERROR_STATUS, error_class.status)
        _error_status(span, error_class.kind, describe_error(exc, error_class))
        span.end()

    def attempt_answered(self, span: Span, route: Route, response: Response) -> None:
        span.set_attributes(response_attributes(response, route, None))
        span.end()

    # -- the call ---------------------------------------------------------------------

    def output_started(self) -> None:
        if self.first_chunk is None:
            self.first_chunk = first = time.perf_counter()
            self.ins.time_to_first_chunk.record(first - self.started, self.facts.metric)

    def answered(self, done: Done) -> Done:
        """The call's Done: the answer's attributes, its cost, the metrics. Returns the
        Done to pass on: priced here when core would have priced it, so core does not
        price it again (it prices only a Response with no cost)."""
        if not self.open:
            return done
        self.open = False
        ended = time.perf_counter()
        route, _ = self.answering
        response = done.response
        cost = response.cost
        if cost is None and (response.model or self.route.name) == route.name:
            # What core's finish would do for this answer: the answering route's
            # price, else the cost the server reported.
            cost = self.client.price(route, response.usage, response.price_factor)
            if cost is None:
                cost = response.server_cost
            if cost is not None:
                done = Done(response=response.model_copy(update={"cost": cost}))
        span = self.span
        if span.is_recording():
            attributes = response_attributes(response, route, cost)
            if self.attempts > 1:
                attributes[names.ATTEMPT] = self.attempts
            if route is not self.route:
                attributes[names.ROUTE] = route.name
            if self.capture:
                reason = FINISH_REASON.get(response.stop_reason, response.stop_reason)
                attributes.update(output_attributes(response, reason))
            span.set_attributes(attributes)
        span.end()
        ins, facts = self.ins, self.facts
        metric = facts.metric
        ins.duration.record(ended - self.started, metric)
        usage = response.usage
        if usage.reported:
            ins.tokens.record(input_tokens(usage), facts.input_tokens)
            ins.tokens.record(usage.output, facts.output_tokens)
        first_chunk = self.first_chunk
        if first_chunk is not None and usage.output > 1:
            # Once per stream, the mean gap after the first chunk (tokens stand for
            # chunks): timing every chunk would put a layer on every event.
            ins.time_per_chunk.record((ended - first_chunk) / (usage.output - 1), metric)
        return done

    def failed(self, exc: BaseException) -> None:
        if not self.open:
            return
        self.open = False
        route, _ = self.answering
        error_class = self.client.classify(exc, route)
        message = describe_error(exc, error_class)
        if error_class.status is not None:
            self.span.set_attribute(names.ERROR_STATUS, error_class.status)
        if self.attempts > 1:
            self.span.set_attribute(names.ATTEMPT, self.attempts)
        _error_status(self.span, error_class.kind, message)
        self.span.end()
        self.ins.duration.record(
            time.perf_counter() - self.started,
            {**self.facts.metric, names.ERROR_TYPE: error_class.kind},
        )

    def closed(self, error_kind: str | None = None) -> None:
        """The caller stopped reading (or no Done came): the span ends, marked so."""
        if not self.open:
            return
        self.open = False
        self.span.set_attribute(names.CLOSED_EARLY, True)
        if error_kind is not None:
            _error_status(self.span, error_kind, "the stream ended without its Done")
        self.span.end()
