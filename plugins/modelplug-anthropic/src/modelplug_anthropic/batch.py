"""The ``anthropic-batch`` provider: each call is one request sent as a message batch.

Half the token price, and a wait of minutes to hours. The batch is created, its status
checked at 5 s, 10 s and 20 s, then every 30 s, and its result read once it has ended.
Each check has a 60 s limit and a failed check is tried again; 10 failures in a row
fail the call. Notices carry the batch id at the start and a status line about every
minute. An abort (or any failure before the batch ended) cancels the batch.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from modelplug import Done, Event, Notice, Request, Route, TextDelta

from . import sdk as sdk_module
from .budget import fit_thinking
from .errors import BatchResultError
from .mapping import from_wire_message, to_wire_params
from .options import cache_enabled

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = ["CUSTOM_ID", "PRICE_FACTOR", "TIMING", "BatchTiming", "stream_batch"]

CUSTOM_ID = "modelplug"
PRICE_FACTOR = 0.5
T = TypeVar("T")


@dataclass
class BatchTiming:
    """When and how long to wait. Tests replace :data:`TIMING` with a fake ``sleep``
    and ``clock`` so that nothing really waits."""

    first_waits: tuple[float, ...] = (5.0, 10.0, 20.0)
    every: float = 30.0
    check_limit: float = 60.0
    max_failures: int = 10
    status_every: float = 60.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    clock: Callable[[], float] = time.monotonic

    def waits(self) -> Iterator[float]:
        """The wait before each status check: 5, 10, 20, then 30 s forever."""
        yield from self.first_waits
        while True:
            yield self.every


TIMING = BatchTiming()


async def _checked(
    call: Callable[[], Awaitable[T]], timing: BatchTiming, waits: Iterator[float]
) -> T:
    """``call()`` with the check limit, tried again after the next wait when it fails;
    the error of the ``max_failures``-th failure in a row is raised."""
    failures = 0
    while True:
        try:
            async with asyncio.timeout(timing.check_limit):
                return await call()
        except Exception:
            failures += 1
            if failures >= timing.max_failures:
                raise
        await timing.sleep(next(waits))


async def _read_result(sdk: Any, batch_id: str) -> Any:
    results = await sdk.messages.batches.results(batch_id)
    try:
        async for line in results:
            if line.custom_id == CUSTOM_ID:
                return line.result
    finally:
        await results.close()
    return None


async def _cancel(sdk: Any, batch_id: str, timing: BatchTiming) -> None:
    """Cancel the batch, best effort: the caller is already failing or leaving."""
    try:
        async with asyncio.timeout(timing.check_limit):
            await sdk.messages.batches.cancel(batch_id)
    except Exception:
        pass


def _raise_for(result: Any, batch_id: str) -> None:
    kind = getattr(result, "type", None)
    if result is None:
        raise BatchResultError(
            f"batch {batch_id} ended without a result for {CUSTOM_ID!r}", result="missing"
        )
    if kind == "errored":
        error = getattr(result.error, "error", None)
        etype = getattr(error, "type", None)
        message = getattr(error, "message", "") or ""
        raise BatchResultError(
            f"batch {batch_id}: the request failed: {etype}: {message}".rstrip(": "),
            result="errored",
            type=etype,
        )
    if kind != "succeeded":
        raise BatchResultError(f"batch {batch_id}: the request {kind}", result=str(kind))


async def stream_batch(
    route: Route, request: Request, client: CallContext, key: str | None
) -> AsyncIterator[Event]:
    """One request through the Batch API; see the module docstring."""
    timing = TIMING
    sdk, options = sdk_module.sdk_client(route, client, key)
    cache = cache_enabled(request, options)
    hide = request.thinking is not None and request.thinking.hide
    request, budget_notice = fit_thinking(request, route)
    if budget_notice is not None:
        yield budget_notice
    params = to_wire_params(request, route, cache=cache)
    # Sent once: a new submission is the fallback policy's decision, not ours.
    async with asyncio.timeout(timing.check_limit):
        batch = await sdk.messages.batches.create(
            requests=[{"custom_id": CUSTOM_ID, "params": params}]
        )
    batch_id: str = batch.id
    started = last_status = timing.clock()
    ended = False
    try:
        yield Notice(
            kind="batch",
            message=f"Sent batch {batch_id} to the Anthropic Batch API; waiting for its result.",
            details={"batch_id": batch_id},
        )
        waits = timing.waits()
        while not ended:
            await timing.sleep(next(waits))
            batch = await _checked(lambda: sdk.messages.batches.retrieve(batch_id), timing, waits)
            ended = batch.processing_status == "ended"
            now = timing.clock()
            if not ended and now - last_status >= timing.status_every:
                last_status = now
                minutes = (now - started) / 60
                yield Notice(
                    kind="batch_status",
                    message=f"Batch {batch_id} is {batch.processing_status} after "
                    f"{minutes:.0f} min.",
                    details={
                        "batch_id": batch_id,
                        "status": batch.processing_status,
                        "waited": now - started,
                    },
                )
        result = await _checked(lambda: _read_result(sdk, batch_id), timing, waits)
    except BaseException:
        if not ended:
            await _cancel(sdk, batch_id, timing)
        raise
    _raise_for(result, batch_id)
    response = from_wire_message(result.message, route, hide_thinking=hide)
    response = response.model_copy(
        update={
            "price_factor": PRICE_FACTOR,
            "metadata": {**response.metadata, "batch_id": batch_id},
        }
    )
    if response.text:
        yield TextDelta(text=response.text)
    yield Done(response=response)
