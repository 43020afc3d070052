"""The repetition guard in a call's run (modelplug.client.calls, .repetition_stop): a
stream that loops is closed at once, on its content or its reasoning, and ends with stop
reason ``repetition``, the record and the copies trimmed; settings and the call turn it
off or set thresholds; a plugin's detector replaces the default; a waiting policy is
sent the Done."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from typing import Any

import pytest
from modelplug import Client, Repetition, RepetitionGuard, hookimpl
from modelplug.contract.types import (
    Done,
    Endpoint,
    Event,
    Message,
    Notice,
    Request,
    Response,
    Route,
    TextBlock,
    TextDelta,
    ThinkingDelta,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

from tests.test_splice import Policy

INTRO = "Let me list the steps.\n"
LINE = "- open the file, read the header, and check the version field\n"  # 64 bytes


class Looper:
    """A provider that streams ``INTRO`` then ``LINE`` in 8-character deltas ``copies``
    times (None: for ever), and records how far it got and whether it was closed."""

    name = "looper"

    def __init__(self, copies: int | None = None, channel: str = "content") -> None:
        self.copies = copies
        self.channel = channel
        self.sent = 0
        self.closed = False

    @hookimpl
    def modelplug_resolve(self, spec: str) -> Route | None:
        provider, _, model = spec.partition("/")
        if provider != "looper":
            return None
        return Route(provider="looper", model=model, endpoint=Endpoint(type="looper"))

    @hookimpl
    def modelplug_stream(self, route: Route, request: Request) -> AsyncIterator[Event] | None:
        return self.play(route) if route.endpoint.type == "looper" else None

    def delta(self, piece: str) -> Event:
        return TextDelta(text=piece) if self.channel == "content" else ThinkingDelta(text=piece)

    async def play(self, route: Route) -> AsyncIterator[Event]:
        try:
            yield self.delta(INTRO)
            self.sent += len(INTRO)
            copy = 0
            while self.copies is None or copy < self.copies:
                for at in range(0, len(LINE), 8):
                    yield self.delta(LINE[at : at + 8])
                    self.sent += len(LINE[at : at + 8])
                copy += 1
            text = INTRO + LINE * copy
            yield Done(
                response=Response(
                    message=Message(role="assistant", content=[TextBlock(text=text)]),
                    usage=Usage(input=3, output=len(text) // 4),
                )
            )
        finally:
            self.closed = True


def run(client: Client, spec: str = "looper/m", **fields: Any) -> tuple[Response, list[Event]]:
    events = list(client.stream(spec, "go", **fields))
    done = events[-1]
    assert isinstance(done, Done)
    return done.response, events


def test_a_looping_stream_is_closed_and_ends_with_stop_reason_repetition() -> None:
    looper = Looper(copies=None)
    with Client(plugins=[looper], entry_points=False) as client:
        response, events = run(client)
    assert looper.closed
    # Closed within min_scans (2) scans of the loop meeting the thresholds: 3 copies of
    # the 62-byte line make 186 < 512, so 9 copies (558 bytes), then the scan that first
    # sees the run and the one that sees it again, 256 characters and a delta each.
    assert looper.sent <= len(INTRO) + 9 * len(LINE) + 2 * (256 + 8)
    assert response.stop_reason == "repetition"
    found = response.repetition
    assert isinstance(found, Repetition)
    assert (found.channel, found.period, found.offset) == ("content", len(LINE), len(INTRO) - 1)
    assert found.copies >= 8
    # Exactly one copy kept, the first of the run (which begins at INTRO's newline).
    assert response.text == INTRO + LINE[:-1]
    assert len((INTRO + LINE * found.copies).encode()) - found.trimmed <= len(INTRO + LINE)
    assert response.usage.reported is False and response.usage.output > 0
    notices = [e for e in events if isinstance(e, Notice)]
    assert [n.kind for n in notices] == ["repetition"]
    assert notices[0].details["period"] == len(LINE)


def test_a_loop_in_the_reasoning_is_cut_and_trimmed_there() -> None:
    looper = Looper(copies=None, channel="reasoning")
    with Client(plugins=[looper], entry_points=False) as client:
        response, _ = run(client)
    assert looper.closed
    assert response.stop_reason == "repetition"
    assert response.repetition is not None and response.repetition.channel == "reasoning"
    thinking = response.message.content[0]
    assert thinking.type == "thinking" and thinking.text == INTRO + LINE[:-1]


def test_a_call_can_turn_the_guard_off() -> None:
    looper = Looper(copies=40)
    with Client(plugins=[looper], entry_points=False) as client:
        response, _ = run(client, repetition=False)
    assert response.stop_reason == "end_turn"
    assert response.text == INTRO + LINE * 40


def test_settings_turn_the_guard_off_without_a_warning() -> None:
    looper = Looper(copies=40)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        client = Client(plugins=[looper], entry_points=False, config={"repetition": {"off": True}})
    with client:
        response, _ = run(client)
        assert response.stop_reason == "end_turn"
        # The call's own True wins over the settings.
        again, _ = run(client, repetition=True)
        assert again.stop_reason == "repetition"


def test_settings_and_the_call_set_thresholds() -> None:
    with Client(
        plugins=[Looper(copies=40)], entry_points=False, config={"repetition": {"min_span": 4000}}
    ) as client:
        response, _ = run(client)
        assert response.stop_reason == "end_turn"
    with Client(plugins=[Looper(copies=40)], entry_points=False) as client:
        response, _ = run(client, repetition=RepetitionGuard(min_copies=50))
        assert response.stop_reason == "end_turn"


def test_a_wrong_threshold_is_named() -> None:
    from modelplug import ConfigError

    with (
        Client(
            plugins=[Looper(copies=4)], entry_points=False, config={"repetition": {"min_copies": 1}}
        ) as client,
        pytest.raises(ConfigError, match=r"\[repetition\] min_copies"),
    ):
        run(client)


def test_a_policy_waiting_for_the_done_is_sent_the_guards_done() -> None:
    policy = Policy()
    looper = Looper(copies=None)
    with Client(plugins=[looper, policy], entry_points=False) as client:
        response, events = run(client)
    assert looper.closed
    assert response.stop_reason == "repetition"
    assert policy.got == [f"done: {INTRO + LINE[:-1]}"]
    kinds = [e.kind for e in events if isinstance(e, Notice)]
    assert kinds == ["limits", "repetition", "limits"]


class StopWord:
    """A plugin whose detector trips on the word STOP, every delta."""

    def __init__(self) -> None:
        self.asked: list[RepetitionGuard] = []

    @hookimpl
    def modelplug_repetition_detector(self, route: Route, guard: RepetitionGuard) -> Any:
        self.asked.append(guard)
        return StopWordDetector() if route.provider == "looper" else None


class StopWordDetector:
    scan_every = 1

    def __init__(self) -> None:
        self.seen = ""

    def scan(self, channel: str, text: str) -> Repetition | None:
        self.seen += text
        if "version" in self.seen:
            return Repetition(channel=channel, copies=1, detector="stop-word")
        return None


def test_modelplug_repetition_detector() -> None:
    """A plugin's detector replaces the default for the stream it was asked for."""
    plugin = StopWord()
    looper = Looper(copies=None)
    with Client(plugins=[looper, plugin], entry_points=False) as client:
        response, _ = run(client, repetition=RepetitionGuard(min_span=600))
    assert plugin.asked == [RepetitionGuard(min_span=600)]
    assert response.stop_reason == "repetition"
    assert response.repetition is not None and response.repetition.detector == "stop-word"
    # It tripped on the first line, long before the default could have.
    assert looper.sent < len(INTRO) + len(LINE)
    assert response.text.endswith("the version ")


def test_modelplug_repetition_detector_is_not_asked_when_the_guard_is_off() -> None:
    plugin = StopWord()
    with Client(plugins=[Looper(copies=2), plugin], entry_points=False) as client:
        response, _ = run(client, repetition=False)
    assert plugin.asked == []
    assert response.stop_reason == "end_turn"


class Mixed:
    """A provider whose deltas alternate: 5 characters of content, 3 of reasoning."""

    name = "mixed"

    @hookimpl
    def modelplug_resolve(self, spec: str) -> Route | None:
        if not spec.startswith("mixed/"):
            return None
        return Route(provider="mixed", model="m", endpoint=Endpoint(type="mixed"))

    @hookimpl
    def modelplug_stream(self, route: Route, request: Request) -> AsyncIterator[Event] | None:
        return self.play() if route.endpoint.type == "mixed" else None

    async def play(self) -> AsyncIterator[Event]:
        for n in range(8):
            yield TextDelta(text=f"text{n}")
            yield ThinkingDelta(text=f"th{n}")
        yield Done(response=Response.partial("mixed/m", "", ""))


class Recorder:
    """A plugin whose detector records what each scan was fed, and never trips."""

    name = "recorder"

    def __init__(self) -> None:
        self.scans: list[tuple[str, str]] = []

    @hookimpl
    def modelplug_repetition_detector(self, route: Route) -> Any:
        return self if route.provider == "mixed" else None

    scan_every = 12

    def scan(self, channel: str, text: str) -> Repetition | None:
        self.scans.append((channel, text))
        return None


def test_each_channel_is_scanned_once_scan_every_of_its_characters_arrived() -> None:
    """Each channel counts its own characters, and a scan is fed exactly the deltas of
    that channel since its last scan: content at 15 and 30 characters (every third
    5-character delta), reasoning at 12 and 24 (every fourth 3-character one)."""
    recorder = Recorder()
    with Client(plugins=[Mixed(), recorder], entry_points=False) as client:
        response, events = run(client, "mixed/m")
    assert response.repetition is None
    assert len(events) == 17  # every delta shown, then the Done
    assert recorder.scans == [
        ("content", "text0text1text2"),
        ("reasoning", "th0th1th2th3"),
        ("content", "text3text4text5"),
        ("reasoning", "th4th5th6th7"),
    ]


class ToolCaller:
    """A provider that always calls ``read_file`` with the same path."""

    name = "tool-caller"

    @hookimpl
    def modelplug_resolve(self, spec: str) -> Route | None:
        provider, _, model = spec.partition("/")
        if provider != "caller":
            return None
        return Route(provider="caller", model=model, endpoint=Endpoint(type="caller"))

    @hookimpl
    def modelplug_stream(self, route: Route, request: Request) -> AsyncIterator[Event] | None:
        return self.play() if route.endpoint.type == "caller" else None

    async def play(self) -> AsyncIterator[Event]:
        yield TextDelta(text="Let me read it.")
        message = Message(
            role="assistant",
            content=[
                TextBlock(text="Let me read it."),
                ToolUseBlock(name="read_file", input={"path": "a.txt"}),
            ],
        )
        yield Done(response=Response(message=message, stop_reason="tool_use"))


def conversation(results: list[str]) -> list[Message]:
    """The user's question, then one read_file call and its result per item."""
    messages = [Message(role="user", content="what is in a.txt?")]
    for number, result in enumerate(results):
        call = ToolUseBlock(id=f"call_{number}", name="read_file", input={"path": "a.txt"})
        messages.append(Message(role="assistant", content=[call]))
        messages.append(
            Message(
                role="user", content=[ToolResultBlock(tool_use_id=f"call_{number}", content=result)]
            )
        )
    return messages


def test_a_tool_call_that_keeps_returning_the_same_result_ends_the_turn() -> None:
    with Client(plugins=[ToolCaller()], entry_points=False) as client:
        events = list(client.stream("caller/m", conversation(["no such file"] * 3)))
    response = events[-1].response
    assert response.stop_reason == "repetition"
    found = response.repetition
    assert found is not None and (found.kind, found.channel, found.copies) == (
        "tool",
        "tool:read_file",
        3,
    )
    assert found.sample == 'read_file({"path": "a.txt"})'
    # The call is not delivered; the text stays.
    assert response.tool_calls == [] and response.text == "Let me read it."
    assert [e.kind for e in events if isinstance(e, Notice)] == ["repetition"]


def test_a_tool_call_whose_results_changed_or_are_fewer_goes_through() -> None:
    with Client(plugins=[ToolCaller()], entry_points=False) as client:
        fewer = client.complete("caller/m", conversation(["no such file"] * 2))
        changed = client.complete("caller/m", conversation(["a", "b", "b"]))
        off = client.complete(
            "caller/m",
            conversation(["no such file"] * 3),
            repetition=RepetitionGuard(tool_copies=0),
        )
        more = client.complete(
            "caller/m", conversation(["a", "b", "b"]), repetition=RepetitionGuard(tool_copies=2)
        )
    assert [r.stop_reason for r in (fewer, changed, off)] == ["tool_use"] * 3
    assert more.stop_reason == "repetition" and more.repetition.copies == 2
