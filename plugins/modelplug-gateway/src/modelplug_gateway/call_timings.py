"""Where a served call's time went, stamped on its answer (seed 004).

Every answer the gateway serves carries three headers, named as a corrallm-style proxy
names them (the kit's :data:`modelplug_kit.TIMING_HEADERS`), in milliseconds:

- ``X-Corrallm-Queued-Ms``: time held in admission (the gate: virtual-key rates and
  budgets, modelplug-limits' waits) before the call was dispatched;
- ``X-Corrallm-Load-Ms``: time waiting for the model to be loaded: 0, as the gateway
  loads no model itself;
- ``X-Corrallm-Upstream-Ttfb-Ms``: time from dispatch upstream to the upstream's first
  event (its first delta, or its whole answer when it sent none): the model's prompt
  evaluation, not waiting. A stream's headers go out after that event, so it is known
  then; a stream whose first frame came before it (a notice) leaves it out of the
  headers and gives it at the end.

The answer's ``timings`` (the Response's, and in every shape's body and stream end: the
Chat Completions final chunk, the Messages ``message_delta``, the Responses response
object) holds the upstream's own figures (llama.cpp's ``timings``) with these three put
in place of any the upstream reported. An error answered after admission carries the
headers as far as they are known (queued and load; ttfb when the upstream's first event
came before the failure).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from modelplug import Response, Timings
from modelplug_kit import LOAD_HEADER, QUEUED_HEADER, UPSTREAM_TTFB_HEADER

if TYPE_CHECKING:
    from modelplug import Event

__all__ = ["CallClock", "timings_field"]


def timings_field(response: Response) -> dict[str, Any]:
    """``{"timings": ...}``: where the time went, in llama.cpp's names and the gateway's;
    empty when nothing is known. Each shape spreads it into its answer."""
    if response.timings is None:
        return {}
    said = response.timings.model_dump(exclude_none=True)
    return {"timings": said} if said else {}


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


class CallClock:
    """One call's admission time, dispatch and the upstream's first event."""

    __slots__ = ("dispatched", "first", "queued")

    def __init__(self) -> None:
        self.queued = 0.0
        self.dispatched: float | None = None
        self.first: float | None = None

    def dispatch(self) -> None:
        self.dispatched = time.perf_counter()

    def see(self, event: Event) -> None:
        """Note the upstream's first event (a notice is the client's, not the upstream's)."""
        if self.first is None and event.type != "notice":
            self.first = time.perf_counter()

    def ttfb_ms(self) -> float | None:
        if self.dispatched is None or self.first is None:
            return None
        return _ms(self.first - self.dispatched)

    def headers(self) -> list[tuple[bytes, bytes]]:
        """The timing headers, as far as they are known now."""
        headers = [
            (QUEUED_HEADER.lower().encode(), f"{_ms(self.queued):g}".encode()),
            (LOAD_HEADER.lower().encode(), b"0"),
        ]
        ttfb = self.ttfb_ms()
        if ttfb is not None:
            headers.append((UPSTREAM_TTFB_HEADER.lower().encode(), f"{ttfb:g}".encode()))
        return headers

    def stamped(self, response: Response) -> Response:
        """``response`` with the gateway's three facts in its timings."""
        if self.first is None:
            self.first = time.perf_counter()  # it sent no delta: its whole answer was first
        queued, ttfb = _ms(self.queued), self.ttfb_ms()
        if response.timings is None:
            timings = Timings(queued_ms=queued, load_ms=0.0, upstream_ttfb_ms=ttfb)
        else:
            own = {"queued_ms": queued, "load_ms": 0.0, "upstream_ttfb_ms": ttfb}
            timings = response.timings.model_copy(update=own)
        return response.model_copy(update={"timings": timings})
