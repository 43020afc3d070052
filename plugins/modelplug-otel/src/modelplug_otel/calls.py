"""The stream wrapper: the call's record, and a child span for every re-opened attempt.

The call's generator reads the stream only up to the first output (the notices before
it say which attempts failed), then hands the rest to a consumer that takes splices
(core's call guard) and is sent the Done back (see modelplug.client.splice): no layer per event.
An attempt the fallback policy re-opens passes through this same hook again; it is told
apart by the call it belongs to, kept in a context variable for the call's duration.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Generator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from modelplug import (
    Done,
    Notice,
    Offer,
    Splice,
    SpliceReader,
    TextDelta,
    ThinkingDelta,
    ToolCallStart,
)

from .record import CallRecord

if TYPE_CHECKING:
    from modelplug import CallContext, Event, Request, Route
    from opentelemetry.trace import Span

HookWrapper = Generator[None, "AsyncIterator[Event] | None", "AsyncIterator[Event] | None"]

OUTPUT = (TextDelta, ThinkingDelta, ToolCallStart)

_CALL: ContextVar[CallRecord | None] = ContextVar("modelplug_otel_call", default=None)


def wrapper(route: Route, request: Request, client: CallContext) -> HookWrapper:
    """The body of the ``wrapper=True`` hook."""
    call = _CALL.get()
    if call is not None and call.open and call.request is request:
        return (yield from _attempt(call, route))
    call = CallRecord(route, request, client)
    call.previous = _CALL.get()
    previous = _CALL.set(call)
    try:
        stream = yield
    except BaseException as exc:
        call.failed(exc)
        _CALL.reset(previous)
        raise
    if stream is None:
        call.closed("no_provider")
        _CALL.reset(previous)
        return None
    return Offer(lambda offer: _call_events(offer, stream, call))


def _attempt(call: CallRecord, route: Route) -> HookWrapper:
    span = call.reopened(route)
    try:
        stream = yield
    except BaseException as exc:
        call.attempt_failed(span, route, exc)
        raise
    if stream is None:
        span.end()
        return None
    return Offer(lambda offer: _attempt_events(offer, stream, call, route, span))


async def _attempt_events(
    offer: Offer, stream: AsyncIterator[Event], call: CallRecord, route: Route, span: Span
) -> AsyncGenerator[Any, Any]:
    """One re-opened attempt: its span ends with its Done or its failure."""
    ended = False
    try:
        if offer.accepted:
            done = yield Splice(stream)
        else:
            async for event in stream:
                if type(event) is Done:
                    done = event
                    break
                yield event
            else:
                return
        ended = True
        call.attempt_answered(span, route, done.response)
        yield done
    except Exception as exc:
        if not ended:
            ended = True
            call.attempt_failed(span, route, exc)
        raise
    finally:
        if not ended:
            span.set_attribute("modelplug.closed_early", True)
            span.end()
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


async def _call_events(
    offer: Offer, stream: AsyncIterator[Event], call: CallRecord
) -> AsyncGenerator[Any, Any]:
    """The call: notices until the first output, then the rest handed over."""
    reader = SpliceReader(stream)
    handing = offer.accepted
    # Raised after the except blocks: raised inside them it would chain the error
    # being handled as its __context__.
    failure: BaseException | None = None
    try:
        try:
            while True:
                async for event in reader.source:
                    kind = type(event)
                    if kind is Splice:
                        reader.take(event)  # the fallback policy made its decisions
                        break
                    if kind is Notice:
                        call.noticed(event)
                    elif kind is Done:
                        for shown in await reader.done(event):
                            if type(shown) is Done:
                                shown = call.answered(shown)
                            yield shown
                        return
                    elif isinstance(event, OUTPUT):
                        call.output_started()
                        yield event
                        if handing:
                            break
                        continue
                    yield event
                else:
                    call.closed("incomplete")  # ended without Done: core reports it
                    return
                if call.first_chunk is not None and handing:
                    break
        except Exception as exc:
            failure = exc
            if reader.finishers:
                said, failure = await reader.failed(exc)
                for event in said:
                    yield event
        if failure is None and call.first_chunk is not None and handing:
            # The output began and the consumer takes splices: it reads on from here.
            try:
                done = yield Splice(reader.source)
            except Exception as exc:
                said, failure = await reader.failed(exc)
                for event in said:
                    yield event
            else:
                for shown in await reader.done(done):
                    if type(shown) is Done:
                        shown = call.answered(shown)
                    yield shown
        if failure is not None:
            call.failed(failure)
            raise failure
    finally:
        call.closed()
        if _CALL.get() is call:
            _CALL.set(call.previous)
        await reader.aclose()
