"""One call through a deadline route: ``slow`` raced against the step limit and the
switch, then ``fast`` when either came first."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from modelplug import Done, Event, Notice, Request, Route

from .loops import refuse_loops
from .progress import BATCH_KINDS, moved, waiting
from .pump import Pump
from .table import Deadline

if TYPE_CHECKING:
    from modelplug import CallContext

    from .clock import Clock

__all__ = ["Moved", "SwitchTime", "deadline_events"]

SwitchTime = Callable[["CallContext", Deadline], Awaitable[float | None]]


@dataclass(frozen=True)
class Moved:
    """A request taken off ``slow``: why, after how long, and its batch (if any)."""

    why: str
    waited: float
    batch_id: str | None

    def record(self, slow: str) -> dict[str, Any]:
        """What the answer's metadata keeps of the cancelled request (its spend)."""
        return {
            "route": slow,
            "why": self.why,
            "waited_s": self.waited,
            "batch_id": self.batch_id,
            "status": "cancelled",
        }


async def deadline_events(
    deadline: Deadline,
    route: Route,
    request: Request,
    client: CallContext,
    clock: Clock,
    switch_time: SwitchTime,
) -> AsyncIterator[Event]:
    """The events of one call on ``route`` (the deadline route itself); ``switch_time``
    says the Unix time of the switch (None: none set)."""
    refuse_loops(client, deadline)
    switch = await switch_time(client, deadline)
    sent = clock.now()
    if switch is not None and sent >= switch:
        async for event in _answered(client, deadline.fast, request, route, None):
            yield event
        return
    ends = [t for t in (switch, _plus(sent, deadline.step_limit)) if t is not None]
    until = min(ends) if ends else None
    why = "the switch time was reached" if until == switch else "the step limit was reached"
    slow = client.resolve(deadline.slow)
    fast = client.resolve(deadline.fast)
    outcome: Moved | None = None
    # Closed with this stream (the caller's close, Ctrl-C), so the slow request stops
    # at once, not when the garbage collector finds it.
    async with aclosing(_slow(client, slow, fast, request, route, clock, until, why)) as items:
        async for item in items:
            if isinstance(item, Moved):
                outcome = item
            else:
                yield item
    if outcome is not None:
        yield moved(slow.name, fast.name, why, outcome.waited, outcome.batch_id)
        async for event in _answered(
            client, deadline.fast, request, route, outcome.record(slow.name)
        ):
            yield event


async def _slow(
    client: CallContext,
    slow: Route,
    fast: Route,
    request: Request,
    route: Route,
    clock: Clock,
    until: float | None,
    why: str,
) -> AsyncGenerator[Event | Moved, None]:
    """``slow``'s events until it answers, or a :class:`Moved` once ``until`` came
    first (the slow request then is stopped: a batch cancelled through the API). The
    race ends with the first output: a started answer is never thrown away."""
    sent = clock.now()
    pump = Pump(client.open_stream(slow, request))
    timer = asyncio.ensure_future(clock.sleep_until(until)) if until is not None else None
    batch_id: str | None = None
    got: asyncio.Future[Any] | None = None
    try:
        while True:
            got = asyncio.ensure_future(pump.queue.get())
            racing = {got} if timer is None else {got, timer}
            await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
            if not got.done():
                got.cancel()
                await pump.stop()
                yield Moved(why=why, waited=clock.now() - sent, batch_id=batch_id)
                return
            kind, value = got.result()
            if kind == "end":
                return
            if kind == "error":
                raise value
            if isinstance(value, Notice) and value.kind in BATCH_KINDS:
                batch_id = value.details.get("batch_id", batch_id)
                left = None if until is None else max(0.0, until - clock.now())
                yield waiting(value, slow.name, fast.name, left)
                continue
            if not isinstance(value, Notice) and timer is not None:
                timer.cancel()  # output began: this request stays on slow
                timer = None
            yield _marked(value, route, None)
    finally:
        # The caller's own cancel (or close) ends here too: it stops slow, never switches.
        if got is not None and not got.done():
            got.cancel()
        if timer is not None:
            timer.cancel()
        await pump.stop()


async def _answered(
    client: CallContext,
    spec: str,
    request: Request,
    route: Route,
    cancelled: dict[str, Any] | None,
) -> AsyncIterator[Event]:
    """``fast``'s events, its answer marked with what the deadline route did."""
    async for event in client.open_stream(client.resolve(spec), request):
        yield _marked(event, route, cancelled)


def _marked(event: Event, route: Route, cancelled: dict[str, Any] | None) -> Event:
    """``event``; a Done's Response with ``metadata["deadline"]``: the deadline route's
    name and, when a slow request was cancelled, its record."""
    if not isinstance(event, Done):
        return event
    response = event.response
    record: dict[str, Any] = {"route": route.name}
    if cancelled is not None:
        record["cancelled"] = cancelled
    metadata = {**response.metadata, "deadline": record}
    return Done(response=response.model_copy(update={"metadata": metadata}))


def _plus(moment: float, seconds: float | None) -> float | None:
    return None if seconds is None else moment + seconds
