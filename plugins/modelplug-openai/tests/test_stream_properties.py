"""Property tests of the stream reader: any split of a recorded stream gives the same
Response; a mutated stream ends in a Response or a classified ModelplugError."""

from __future__ import annotations

import itertools
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug import ModelplugError
from modelplug.contract.types import Done
from modelplug.testing import examples
from modelplug_kit.testing import load_recording
from modelplug_openai.errors import ResponsesError

RECORDINGS = [
    "text.sse",
    "parallel_calls.sse",
    "reasoning_tool_turn1.sse",
    "web_search.sse",
    "incomplete.sse",
]
# The wire server and client are reused across examples: each example queues one
# response and reads it.
# No deadline: an example is a real loopback call, and a busy machine is no failure
# (also when these run from the sdist, without the repository's hypothesis profile).
SHARED = settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def cut(data: bytes, points: list[int]) -> list[bytes]:
    edges = sorted({0, len(data), *(p % (len(data) + 1) for p in points)})
    return [data[a:b] for a, b in itertools.pairwise(edges)]


@SHARED
@given(name=st.sampled_from(RECORDINGS), points=st.lists(st.integers(min_value=0), max_size=40))
def test_any_split_gives_the_same_response(responses, wire_server, wire, recorded, name, points):
    client = responses()
    data = load_recording(recorded / name)
    wire_server.add([data])
    _, whole = wire.run(client)
    wire_server.add(cut(data, points))
    _, split = wire.run(client)
    assert split.model_dump(exclude={"metadata"}) == whole.model_dump(exclude={"metadata"})
    assert split.message.content  # every recording has content


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def mutate(events, data):
    """One random change: drop, duplicate or swap an event, set a field of one to any
    JSON value, or cut an event's data short."""
    events = [dict(e) for e in events]
    index = data.draw(st.integers(0, len(events) - 1))
    kind = data.draw(st.sampled_from(["drop", "duplicate", "swap", "field", "nested", "truncate"]))
    raw = None
    if kind == "drop":
        del events[index]
    elif kind == "duplicate":
        events.insert(index, events[index])
    elif kind == "swap":
        other = data.draw(st.integers(0, len(events) - 1))
        events[index], events[other] = events[other], events[index]
    elif kind == "field":
        key = data.draw(st.sampled_from(sorted(events[index])))
        events[index][key] = data.draw(JSON)
    elif kind == "nested":
        for key in ("item", "response", "delta", "part"):
            if isinstance(events[index].get(key), dict):
                inner = dict(events[index][key])
                field = data.draw(st.sampled_from(sorted(inner) or ["x"]))
                inner[field] = data.draw(JSON)
                events[index][key] = inner
                break
    else:
        raw = index, data.draw(st.integers(0, 50))
    lines = []
    for i, event in enumerate(events):
        text = json.dumps(event)
        if raw is not None and raw[0] == i:
            text = text[: raw[1]]
        lines.append(f"event: {event.get('type', 'x')}\ndata: {text}\n\n".encode())
    return lines


@settings(SHARED, max_examples=examples(100))
@given(name=st.sampled_from(RECORDINGS), data=st.data())
def test_a_mutated_stream_ends_in_a_response_or_a_classified_error(
    responses, wire_server, wire, recorded, name, data
):
    client = responses()
    wire_server.add(mutate(wire.recorded_events(name), data))
    try:
        events = list(client.stream("wire/gpt-5", "hi"))
    except ModelplugError as error:
        # Raised by this plugin, already classified: not a stray exception that core
        # had to wrap.
        assert isinstance(error, ResponsesError), repr(error)
        assert error.error_class.kind != "other"
    else:
        assert isinstance(events[-1], Done)
        assert sum(isinstance(e, Done) for e in events) == 1
