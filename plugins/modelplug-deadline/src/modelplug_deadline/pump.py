"""A stream read by a task of its own, so a deadline can be raced against its next
event and the stream stopped wherever it waits (a Batch route then cancels its batch)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Literal

from modelplug import Event

__all__ = ["Pump"]

Item = (
    tuple[Literal["event"], Event]
    | tuple[Literal["end"], None]
    | tuple[Literal["error"], Exception]
)


class Pump:
    """Reads ``stream`` into a one-place queue from its own task."""

    def __init__(self, stream: AsyncIterator[Event]) -> None:
        self.queue: asyncio.Queue[Item] = asyncio.Queue(maxsize=1)
        self.task = asyncio.ensure_future(self._run(stream))

    async def _run(self, stream: AsyncIterator[Event]) -> None:
        try:
            async for event in stream:
                await self.queue.put(("event", event))
            await self.queue.put(("end", None))
        except Exception as exc:
            await self.queue.put(("error", exc))
        finally:
            # Stopped while the queue was full: the stream waits at a yield, and only
            # closing it runs its cleanup (a batch's cancel).
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()

    async def stop(self) -> None:
        """Cancel the reading task and wait until the stream has cleaned up."""
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
