"""The repetition guard in a call's run: which detector watches the stream, and the
Response and Notice a tripped guard ends it with.

:func:`modelplug.client.calls.guarded_stream` feeds the detector each channel's text
every ``scan_every`` characters; when it reports a loop, the call stops reading, closes
the provider's stream (so its HTTP response is closed and no more tokens are made), and
ends with :func:`stopped_response` (the policies waiting for the Done are sent it, as
for any Done).
"""

from __future__ import annotations

import dataclasses
import sys
from typing import TYPE_CHECKING

from modelplug.contract.repetition import SECTION, RepetitionGuard, trim_repetition

if TYPE_CHECKING:
    from modelplug.client.surface import ClientSurface
    from modelplug.contract.repetition import Channel, RepetitionDetector
    from modelplug.contract.routes import Route
    from modelplug.contract.settings import Settings
    from modelplug.contract.types import Done, Notice, Repetition, Request, Response

__all__ = [
    "StreamWatch",
    "guard_for",
    "repetition_notice",
    "settings_guard",
    "stopped_response",
]


def settings_guard(settings: Settings) -> RepetitionGuard:
    """The ``[repetition]`` table of ``settings`` (the defaults where it says nothing)."""
    from modelplug.host.options import read_options

    return read_options(settings, SECTION, RepetitionGuard)


def guard_for(settings: Settings, request: Request) -> RepetitionGuard | None:
    """The thresholds for one call, None when the guard is off for it: the call's own
    ``repetition`` (False: off; True: on, with the settings' thresholds; a
    RepetitionGuard: its thresholds), else the settings'."""
    asked = request.repetition
    if asked is False:
        return None
    if isinstance(asked, RepetitionGuard):
        guard = asked
    else:
        guard = settings_guard(settings)
        if asked is True and guard.off:
            guard = dataclasses.replace(guard, off=False)
    return None if guard.off else guard


def stopped_response(
    route: Route, request: Request, text: str, thought: str, found: Repetition
) -> Response:
    """The Response of a stream the guard closed: what it showed, with the tripped
    channel's redundant copies trimmed, stop reason ``repetition`` and usage estimated
    from everything that was generated (the provider never sent its count)."""
    from modelplug.contract.estimate import estimated_usage, prompt_texts
    from modelplug.contract.types import Response

    sent = sum(len(part) for part in prompt_texts(request))
    usage = estimated_usage(sent, len(text) + len(thought))
    if found.channel == "content":
        text = trim_repetition(text, found.trimmed)
    elif found.channel == "reasoning":
        thought = trim_repetition(thought, found.trimmed)
    response = Response.partial(route.name, text, thought)
    return response.model_copy(
        update={"stop_reason": "repetition", "repetition": found, "usage": usage}
    )


def repetition_notice(found: Repetition) -> Notice:
    """The Notice said before the Done of a stream the guard closed."""
    from modelplug.contract.types import Notice

    if found.kind == "tool":
        what = (
            f"the model called {found.sample} again after it returned the same result "
            f"{found.copies} times, so its calls were not delivered"
        )
        return Notice(
            kind="repetition",
            message=f"{what} (stop reason 'repetition'); [repetition] tool_copies = 0 "
            "or repetition=False turns this off",
            details=found.model_dump(),
        )
    if found.period:
        what = (
            f"the model repeated the same {found.period} bytes {found.copies} times in its "
            f"{found.channel} (from byte {found.offset})"
        )
    else:
        what = f"the {found.detector or 'plugin'} detector found a loop in the {found.channel}"
    return Notice(
        kind="repetition",
        message=(
            f"{what}, so the stream was closed and {found.trimmed} bytes of copies were "
            "trimmed from the answer (stop reason 'repetition'). Sampling penalties "
            "(frequency_penalty, presence_penalty, repeat_penalty) or a higher temperature "
            "fight the cause; [repetition] off = true or repetition=False turns the guard off"
        ),
        details=found.model_dump(),
    )


class StreamWatch:
    """One call's detector, with how much of each channel it has been fed."""

    __slots__ = ("detector", "fed", "scan_every", "tool_copies")

    def __init__(self, detector: RepetitionDetector | None, tool_copies: int = 0) -> None:
        self.detector = detector
        # Off: a scan is never due (the count never reaches it).
        self.scan_every = sys.maxsize if detector is None else max(1, detector.scan_every)
        self.fed = {"content": 0, "reasoning": 0}
        self.tool_copies = tool_copies

    @classmethod
    def of(cls, client: ClientSurface, route: Route, request: Request) -> StreamWatch:
        """The watch of one call (its detector None when the guard is off for it)."""
        guard = guard_for(client.settings, request)
        if guard is None:
            return cls(None)
        return cls(client.repetition_detector(route, request, guard), guard.tool_copies)

    def done(self, event: Done, request: Request) -> tuple[Done, Notice | None]:
        """The provider's Done, or, when it calls a tool again that kept returning the
        same result (the tool kind), the Done of a turn ended by the guard and its
        Notice (see :mod:`modelplug.client.tool_repeats`)."""
        if not self.tool_copies:
            return event, None
        from modelplug.client.tool_repeats import repeated_tool_call, without_calls

        found = repeated_tool_call(request, event.response, self.tool_copies)
        if found is None:
            return event, None
        stopped = event.model_copy(update={"response": without_calls(event.response, found)})
        return stopped, repetition_notice(found)

    def scan(self, channel: Channel, parts: list[str]) -> Repetition | None:
        """Feed the detector the channel's deltas it has not seen yet."""
        if self.detector is None:
            return None
        fed = self.fed[channel]
        self.fed[channel] = len(parts)
        return self.detector.scan(channel, "".join(parts[fed:]))
