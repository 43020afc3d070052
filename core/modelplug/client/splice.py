"""Hand the rest of a stream to the consumer: policies without a layer per event.

A policy (fallback, limits) wraps the provider's stream to decide things before the
output starts (reserve, wait, retry, switch) and at its end (settle, price, cool
down). Between the two it only passes events on, yet as an async-generator layer it
pays a hop on every one of them. With a splice it steps out of the way:

- The policy returns :class:`Offer` (its generator, made with the offer). A consumer
  that does not know splices iterates it like any stream, and the generator sees
  ``offer.accepted`` false: it passes events through itself, as before.
- A consumer that knows splices (core's call guard, the fallback policy) reads it
  through a :class:`SpliceReader`, which accepts the offer. Once the policy has made
  its decisions it yields ``Splice(rest)`` instead of reading on, and waits at that
  ``yield``: the reader reads ``rest`` directly and then *sends* the policy the Done
  (``asend``) or *throws* it the failure (``athrow``). The policy's code after the
  ``yield`` runs as it would have, in the same generator, ``try``/``finally`` intact;
  what it yields from there (notices, then the Done) is what the consumer shows.

    async def guard(offer: Offer, stream: AsyncIterator[Event]) -> AsyncIterator[...]:
        try:
            ...  # decide before the output (may yield notices)
            if offer.accepted:
                done = yield Splice(stream)   # the Done comes back; a failure is raised here
                yield settled(done)
                return
            async for event in stream:       # a consumer that does not splice
                yield settled(event) if type(event) is Done else event
        finally:
            await stream.aclose()

    return Offer(lambda offer: guard(offer, stream))
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, cast

from modelplug.contract.types import Done, Event

__all__ = ["Offer", "Splice", "SpliceReader"]

PolicyEvents = AsyncGenerator[Any, Any]


class Splice:
    """Yielded by an accepted :class:`Offer`'s generator: "read ``rest`` yourself, then
    send me its Done or throw me its failure". ``rest`` may be an Offer itself."""

    __slots__ = ("rest",)

    def __init__(self, rest: AsyncIterator[Event]) -> None:
        self.rest = rest

    def __repr__(self) -> str:
        return f"Splice(rest={self.rest!r})"


class Offer:
    """A policy's stream that may hand its rest to the consumer (see the module).

    :param make: called once with this offer; returns the policy's async generator,
        which may yield :class:`Splice` only while ``offer.accepted`` is true.

    Iterated plainly (``async for``), it is the generator itself: no layer is added.
    """

    __slots__ = ("accepted", "events")

    def __init__(self, make: Callable[[Offer], PolicyEvents]) -> None:
        self.accepted = False
        self.events = make(self)

    def __aiter__(self) -> AsyncIterator[Event]:
        return cast("AsyncIterator[Event]", self.events)

    def __anext__(self) -> Any:
        return self.events.__anext__()

    async def aclose(self) -> None:
        """Close the policy's generator (an abort before it was handed over)."""
        await self.events.aclose()

    def accept(self) -> PolicyEvents:
        """The generator, told that its consumer takes splices."""
        self.accepted = True
        return self.events


class SpliceReader:
    """The consumer's side: read :attr:`source` in your own loop, and

    - on a :class:`Splice` event, call :meth:`take` and read the new :attr:`source`;
    - on the Done, show :meth:`done`'s events instead (the policies' notices, then the
      Done they made);
    - on a failure, show :meth:`failed`'s events, then raise its error;
    - at the end, however it came, ``await`` :meth:`aclose`.

    A stream that is not an :class:`Offer` is read as it is, and the three calls
    change nothing.
    """

    __slots__ = ("finishers", "source")

    def __init__(self, stream: AsyncIterator[Event]) -> None:
        self.source: AsyncIterator[Any] = _opened(stream)
        # The generators waiting at their ``yield Splice``, outermost first.
        self.finishers: list[PolicyEvents] = []

    def take(self, splice: Splice) -> None:
        """The current source handed over its rest: read that from now on."""
        self.finishers.append(cast("PolicyEvents", self.source))
        self.source = _opened(splice.rest)

    async def done(self, event: Done) -> list[Event]:
        """What to show instead of the rest's Done: each waiting policy, innermost
        first, is sent the Done the one inside it made."""
        shown: list[Event] = []
        final: Done | None = event
        while self.finishers and final is not None:
            said, final = await _finish(self.finishers.pop(), final)
            shown += said
        if final is not None:
            shown.append(final)
        return shown

    async def cut(self, event: Done) -> list[Event]:
        """Close the source now (the consumer stopped reading it: a repetition guard
        tripped), then what :meth:`done` shows for ``event``, the Done the consumer made:
        the waiting policies settle on it as on the provider's own."""
        await _close(self.source)
        return await self.done(event)

    async def failed(self, error: Exception) -> tuple[list[Event], Exception | None]:
        """What to show, then what to raise, after the rest failed with ``error``: each
        waiting policy, innermost first, is thrown the error the one inside it raised.
        None: a policy ended the stream instead (it ends without a Done)."""
        shown: list[Event] = []
        current: Exception | None = error
        while self.finishers and current is not None:
            finisher = self.finishers.pop()
            said, current = await _throw(finisher, current)
            shown += said
        return shown, current

    async def aclose(self) -> None:
        """Close the source, then every policy still waiting (innermost first)."""
        await _close(self.source)
        while self.finishers:
            await _close(self.finishers.pop())


def _opened(stream: AsyncIterator[Event]) -> AsyncIterator[Any]:
    return stream.accept() if isinstance(stream, Offer) else stream


async def _finish(finisher: PolicyEvents, done: Done) -> tuple[list[Event], Done | None]:
    """Send ``done`` to a waiting policy; the notices it yields and the Done it makes
    (None: it made none, and the stream ends without one)."""
    said: list[Event] = []
    final: Done | None = None
    try:
        item = await finisher.asend(done)
        while True:
            if isinstance(item, Done):
                final = item
            else:
                said.append(item)
            item = await finisher.__anext__()
    except StopAsyncIteration:
        pass
    return said, final


async def _throw(finisher: PolicyEvents, error: Exception) -> tuple[list[Event], Exception | None]:
    """Throw ``error`` into a waiting policy; the events it yields and what it raises."""
    said: list[Event] = []
    try:
        item = await finisher.athrow(error)
        while True:
            said.append(item)
            item = await finisher.__anext__()
    except StopAsyncIteration:
        return said, None
    except Exception as raised:
        return said, raised


async def _close(stream: object) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()
