"""Property tests of the stream reader (hypothesis), through the kit's HTTP path and httpx2.

- Random splits of recorded streams give the same Response and the same deltas.
- Mutated and random event sequences, and random bytes, end in a Response or in the
  plugin's own classified StreamError, never another exception (which the client would
  wrap as kind "other").
- The text shown through deltas always equals the final text (and the thinking shown
  equals the final thinking).

Most examples run over httpx2's MockTransport (the kit's HTTP path and httpx2 are real;
only the socket is not), so hundreds of streams take seconds; the split property also runs a
few examples through the loopback wire server.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug import Client, ModelError, TruncatedToolCallError
from modelplug.contract.types import (
    Done,
    Event,
    Response,
    Route,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
)
from modelplug.testing import examples
from modelplug_anthropic.errors import StreamError
from modelplug_anthropic.reader import MessageReader, Problem
from modelplug_kit.testing import WireServer, load_recording

MakeClient = Callable[..., Client]
RECORDINGS = Path(__file__).parent / "recordings"
SPEC = "anthropic/claude-opus-5"
STREAMS = [
    "text.sse",
    "thinking.sse",
    "tool_use.sse",
    "web_search.sse",
    "redacted_thinking.sse",
    "pause_turn.sse",
    "usage_only_in_message_delta.sse",
    "max_tokens_in_tool_json.sse",
    "tool_use_invalid_json.sse",
    "duplicate_message_start.sse",
    "basic_data_only.sse",
    "no_message_stop.sse",
]


def relaxed(count: int) -> settings:
    """No deadline (a stream takes a few ms, more on a busy machine) and fixtures that
    the examples share on purpose (one client, one server); ``count`` examples in CI,
    fewer in a contributor's run (``examples``)."""
    return settings(
        max_examples=examples(count),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


def recorded(name: str) -> bytes:
    return load_recording(RECORDINGS / name)


def recorded_events(name: str) -> list[dict[str, Any]]:
    events = []
    for raw in recorded(name).split(b"\n\n"):
        for line in raw.split(b"\n"):
            if line.startswith(b"data:"):
                events.append(json.loads(line[5:]))
    return events


ALL_EVENTS = [event for name in STREAMS for event in recorded_events(name)]


class _Body(httpx2.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk

    async def aclose(self) -> None:
        return None


class Served:
    """What the mock transport answers next: body chunks and a content type."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.content_type = "text/event-stream"

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": self.content_type}, stream=_Body(list(self.chunks))
        )


@pytest.fixture
def mocked(
    claude_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Client, Served]]:
    served = Served()
    real = httpx2.AsyncClient

    def factory(**kwargs: Any) -> httpx2.AsyncClient:
        # The kit's shared client, as the kit makes it, on the mock transport.
        return real(**kwargs, transport=httpx2.MockTransport(served.handle))

    monkeypatch.setattr(httpx2, "AsyncClient", factory)
    client = claude_client()
    yield client, served
    client.close()


def run(client: Client) -> tuple[list[Event], Response | None, ModelError | None]:
    events: list[Event] = []
    try:
        for event in client.stream(SPEC, "hi"):
            events.append(event)
    except TruncatedToolCallError as exc:
        # Core's refusal of a cut tool call: the Response the plugin ended with is on it,
        # and is checked as any other.
        return events, exc.partial, None
    except ModelError as exc:
        return events, None, exc
    done = events[-1]
    assert isinstance(done, Done)
    return events, done.response, None


def shown_text(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def shown_thinking(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, ThinkingDelta))


def final_thinking(response: Response) -> str:
    return "".join(b.text for b in response.message.content if isinstance(b, ThinkingBlock))


def check_outcome(events: list[Event], response: Response | None, error: ModelError | None) -> None:
    """A Response whose deltas are its text, or the plugin's own classified error."""
    if error is not None:
        assert isinstance(error, StreamError), (type(error), error, error.__cause__)
        assert error.kind != "other" or error.error_class.reason == "the answer was not a stream"
        if error.partial is not None:
            assert shown_text(events).startswith(error.partial.text)
        return
    assert response is not None
    assert shown_text(events) == response.text
    assert shown_thinking(events) == final_thinking(response)


def cut(data: bytes, points: list[int]) -> list[bytes]:
    edges = [0, *sorted(set(points)), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges) if b > a]


# ------------------------------------------------------------------------------ splits


@pytest.mark.parametrize("name", STREAMS)
def test_modelplug_stream_random_splits_give_the_same_response(
    mocked: tuple[Client, Served], name: str
) -> None:
    client, served = mocked
    data = recorded(name)
    served.chunks = [data]
    whole_events, whole, error = run(client)
    assert error is None, error
    assert whole is not None
    check_outcome(whole_events, whole, None)

    @relaxed(15)
    @given(st.lists(st.integers(0, len(data)), max_size=24))
    def split(points: list[int]) -> None:
        served.chunks = cut(data, points)
        events, response, failed = run(client)
        assert failed is None, failed
        assert response == whole
        assert shown_text(events) == shown_text(whole_events)
        assert shown_thinking(events) == shown_thinking(whole_events)

    split()


def test_modelplug_stream_random_splits_through_the_wire_server(
    claude_client: MakeClient, wire_server: WireServer
) -> None:
    client = claude_client()
    data = recorded("web_search.sse")
    wire_server.add(data)
    _, whole, error = run(client)
    assert error is None and whole is not None

    @relaxed(15)
    @given(st.lists(st.integers(0, len(data)), min_size=1, max_size=40))
    def split(points: list[int]) -> None:
        wire_server.add(cut(data, points))
        _, response, failed = run(client)
        assert failed is None, failed
        assert response == whole

    split()


# ---------------------------------------------------------------- mutated and random

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 300) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _places(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) inside a JSON value, at any depth."""
    found: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            found.append((value, key))
            found += _places(inner)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found.append((value, index))
            found += _places(inner)
    return found


@st.composite
def mutated_event(draw: st.DrawFn) -> Any:
    """A recorded event with one field anywhere in it replaced, removed or added, or a
    random JSON value instead of an event."""
    event = json.loads(json.dumps(draw(st.sampled_from(ALL_EVENTS))))
    how = draw(st.sampled_from(["set", "set", "set", "drop", "add", "junk"]))
    places = _places(event)
    if how == "junk" or not places:
        return draw(JSON)
    container, key = draw(st.sampled_from(places))
    if how == "set":
        container[key] = draw(JSON)
    elif how == "drop" and isinstance(container, dict):
        del container[key]
    elif how == "add" and isinstance(container, dict):
        container[draw(st.sampled_from(["type", "text", "index", "input", "usage"]))] = draw(JSON)
    return event


def mostly(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually a value of the right shape, now and then any JSON."""
    return st.one_of(valid, valid, valid, JSON)


WORDS = st.text(alphabet='ab {}":,[]01', max_size=6)
BLOCK_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "text": mostly(WORDS),
    "thinking": mostly(WORDS),
    "signature": mostly(WORDS),
    "data": mostly(WORDS),
    "id": mostly(st.sampled_from(["toolu_1", "srvtoolu_1"])),
    "name": mostly(st.sampled_from(["f", "web_search", ""])),
    "input": mostly(st.dictionaries(st.sampled_from(["q", "x"]), WORDS, max_size=2)),
    "citations": mostly(st.lists(st.dictionaries(st.sampled_from(["url"]), WORDS), max_size=2)),
    "content": JSON,
}
BLOCK_TYPES = ["text", "thinking", "redacted_thinking", "tool_use", "server_tool_use"]
BLOCK_TYPES += ["web_search_tool_result", "mcp_tool_use", "image"]
DELTA_FIELDS: dict[str, tuple[str, st.SearchStrategy[Any]]] = {
    "text_delta": ("text", WORDS),
    "thinking_delta": ("thinking", WORDS),
    "signature_delta": ("signature", WORDS),
    "input_json_delta": ("partial_json", WORDS),
    "citations_delta": ("citation", st.dictionaries(st.sampled_from(["url"]), WORDS)),
    "future_delta": ("value", JSON),
}
USAGE = st.dictionaries(
    st.sampled_from(
        ["input_tokens", "output_tokens", "cache_read_input_tokens", "server_tool_use"]
    ),
    mostly(st.integers(0, 50)),
    max_size=4,
)


@st.composite
def grammar_event(draw: st.DrawFn) -> Any:
    """An event built from the Messages API's grammar, its fields usually well formed."""
    kind = draw(
        st.sampled_from(
            [
                *("content_block_start", "content_block_delta", "content_block_delta"),
                *("content_block_stop", "message_start", "message_delta", "message_stop"),
                *("ping", "error", "future_event"),
            ]
        )
    )
    event: dict[str, Any] = {"type": kind}
    index = draw(mostly(st.integers(0, 3)))
    if kind == "message_start":
        event["message"] = draw(
            mostly(st.fixed_dictionaries({"id": st.sampled_from(["m1", "m2"]), "usage": USAGE}))
        )
    elif kind == "content_block_start":
        block = {"type": draw(mostly(st.sampled_from(BLOCK_TYPES)))}
        for name in draw(st.lists(st.sampled_from(sorted(BLOCK_FIELDS)), max_size=4)):
            block[name] = draw(BLOCK_FIELDS[name])
        event.update(index=index, content_block=draw(mostly(st.just(block))))
    elif kind == "content_block_delta":
        delta_kind = draw(st.sampled_from(sorted(DELTA_FIELDS)))
        field, value = DELTA_FIELDS[delta_kind]
        delta = {"type": delta_kind, field: draw(mostly(value))}
        event.update(index=index, delta=draw(mostly(st.just(delta))))
    elif kind == "content_block_stop":
        event["index"] = index
    elif kind == "message_delta":
        reason = mostly(st.sampled_from(["end_turn", "max_tokens", "tool_use", None]))
        event.update(delta=draw(mostly(st.fixed_dictionaries({"stop_reason": reason}))))
        event["usage"] = draw(mostly(USAGE))
    elif kind == "error":
        event["error"] = draw(mostly(st.fixed_dictionaries({"type": WORDS, "message": WORDS})))
    return event


@relaxed(150)
@given(st.booleans(), st.lists(grammar_event(), max_size=16), st.data())
def test_modelplug_stream_grammar_built_sequences_never_escape(
    mocked: tuple[Client, Served], opened: bool, events: list[Any], data: st.DataObject
) -> None:
    client, served = mocked
    if opened:
        events.insert(0, {"type": "message_start", "message": {"id": "m0", "usage": {}}})
    named = [data.draw(st.booleans()) for _ in events]
    served.chunks = [frame(events, named, [None] * len(events))]
    check_outcome(*run(client))


# What each block type needs, and the deltas that belong to it.
NEEDS = {
    "text": ["text"],
    "thinking": ["thinking", "signature"],
    "redacted_thinking": ["data"],
    "tool_use": ["id", "name", "input"],
    "server_tool_use": ["id", "name", "input"],
    "mcp_tool_use": ["id", "name", "input"],
    "web_search_tool_result": ["content"],
}
BELONGS = {
    "text": ["text_delta", "text_delta", "citations_delta"],
    "thinking": ["thinking_delta", "thinking_delta", "signature_delta"],
    "tool_use": ["input_json_delta"],
    "server_tool_use": ["input_json_delta"],
    "mcp_tool_use": ["input_json_delta"],
}


@st.composite
def built_stream(draw: st.DrawFn) -> list[Any]:
    """A stream in the Messages API's order (message_start, blocks with their deltas,
    message_delta, message_stop) whose fields are usually, not always, well formed, and
    whose events are now and then dropped, repeated or moved."""
    events: list[Any] = [grammar_start(draw)]
    for index in range(draw(st.integers(0, 3))):
        kind = draw(mostly(st.sampled_from(BLOCK_TYPES)))
        block: dict[str, Any] = {"type": kind}
        extra = draw(st.lists(st.sampled_from(sorted(BLOCK_FIELDS)), max_size=2))
        needs = NEEDS.get(kind, []) if isinstance(kind, str) else []
        for name in [*needs, *extra]:
            block[name] = draw(BLOCK_FIELDS[name])
        events.append({"type": "content_block_start", "index": index, "content_block": block})
        kinds = BELONGS.get(kind, sorted(DELTA_FIELDS)) if isinstance(kind, str) else ["x"]
        for _ in range(draw(st.integers(0, 3))):
            delta_kind = draw(mostly(st.sampled_from(kinds)))
            known = isinstance(delta_kind, str) and delta_kind in DELTA_FIELDS
            field, value = DELTA_FIELDS[delta_kind] if known else ("value", JSON)
            delta = {"type": delta_kind, field: draw(mostly(value))}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        if draw(st.integers(0, 5)):
            events.append({"type": "content_block_stop", "index": index})
    if draw(st.integers(0, 5)):
        reason = draw(mostly(st.sampled_from(["end_turn", "max_tokens", "tool_use"])))
        events.append(
            {"type": "message_delta", "delta": {"stop_reason": reason}, "usage": draw(USAGE)}
        )
    if draw(st.integers(0, 5)):
        events.append({"type": "message_stop"})
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(events) - 1))
        how = draw(st.sampled_from(["drop", "repeat", "move"]))
        if how == "drop":
            del events[at]
        elif how == "repeat":
            events.insert(at, events[at])
        else:
            events.insert(draw(st.integers(0, len(events))), events.pop(at))
        if not events:
            break
    return events


def grammar_start(draw: st.DrawFn) -> dict[str, Any]:
    message = draw(mostly(st.fixed_dictionaries({"id": st.just("msg_1"), "usage": USAGE})))
    return {"type": "message_start", "message": message}


@relaxed(200)
@given(built_stream(), st.data())
def test_modelplug_stream_built_streams_end_in_a_response_or_a_classified_error(
    mocked: tuple[Client, Served], events: list[Any], data: st.DataObject
) -> None:
    client, served = mocked
    named = [data.draw(st.booleans()) for _ in events]
    body = frame(events, named, [None] * len(events))
    served.chunks = cut(body, data.draw(st.lists(st.integers(0, len(body)), max_size=4)))
    check_outcome(*run(client))


def read_directly(events: list[Any]) -> tuple[list[Event], Response | None, bool]:
    """The reader alone (no HTTP): its events, its Response, whether it refused."""
    reader = MessageReader(Route(provider="anthropic", model="m"), hide_thinking=False)
    shown: list[Event] = []
    try:
        for event in events:
            shown += reader.feed(event)
            if reader.stopped:
                break
        if not reader.complete:
            reader.partial()
            return shown, None, True
        response, before = reader.finish()
    except Problem:
        reader.partial()
        return shown, None, True
    return [*shown, *before], response, False


@relaxed(800)
@given(built_stream())
def test_message_reader_built_streams_end_in_a_response_or_a_problem(events: list[Any]) -> None:
    shown, response, refused = read_directly(events)
    if not refused:
        assert response is not None
        assert shown_text(shown) == response.text
        assert shown_thinking(shown) == final_thinking(response)


def frame(events: list[Any], named: list[bool], raw: list[str | None]) -> bytes:
    parts = []
    for event, with_name, text in zip(events, named, raw, strict=False):
        data = text if text is not None else json.dumps(event)
        head = ""
        if with_name and isinstance(event, dict) and isinstance(event.get("type"), str):
            head = f"event: {event['type']}\n"
        parts.append(f"{head}data: {data}\n\n")
    return "".join(parts).encode()


@relaxed(150)
@given(data=st.data())
def test_modelplug_stream_mutated_sequences_end_in_a_response_or_a_classified_error(
    mocked: tuple[Client, Served], data: st.DataObject
) -> None:
    client, served = mocked
    base = recorded_events(data.draw(st.sampled_from(STREAMS)))
    # A recorded stream with some of its events mutated, dropped, repeated or moved.
    events: list[Any] = []
    for event in base:
        choice = data.draw(st.sampled_from(["keep"] * 4 + ["mutate", "mutate", "drop", "twice"]))
        if choice == "keep":
            events.append(event)
        elif choice == "mutate":
            events.append(data.draw(mutated_event()))
        elif choice == "twice":
            events += [event, event]
    if data.draw(st.booleans()):
        i, j = data.draw(st.integers(0, len(events))), data.draw(st.integers(0, len(events)))
        events[i:i] = events[j : j + data.draw(st.integers(0, 3))]
    named = [data.draw(st.booleans()) for _ in events]
    # Now and then an event's JSON is cut short or replaced by text.
    raw = [data.draw(st.none() | st.none() | st.none() | st.text(max_size=20)) for _ in events]
    body = frame(events, named, raw)
    served.chunks = cut(body, data.draw(st.lists(st.integers(0, len(body)), max_size=8)))
    check_outcome(*run(client))


@relaxed(100)
@given(st.lists(mutated_event(), max_size=14), st.data())
def test_modelplug_stream_random_event_sequences_never_escape(
    mocked: tuple[Client, Served], events: list[Any], data: st.DataObject
) -> None:
    client, served = mocked
    named = [data.draw(st.booleans()) for _ in events]
    served.chunks = [frame(events, named, [None] * len(events))]
    check_outcome(*run(client))


@relaxed(100)
@given(
    st.binary(max_size=300),
    st.sampled_from(["text/event-stream", "application/json", "text/html", ""]),
)
def test_modelplug_stream_random_bytes_never_escape(
    mocked: tuple[Client, Served], body: bytes, content_type: str
) -> None:
    client, served = mocked
    served.chunks, served.content_type = [body], content_type
    check_outcome(*run(client))
