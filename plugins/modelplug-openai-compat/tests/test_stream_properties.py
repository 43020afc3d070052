"""Properties of the stream reader, on recorded streams and on random ones.

- Any split of a recorded stream into network chunks gives the same outcome: the same
  Response, or the same classified error.
- Mutated recordings and random event sequences end in a Response or a classified
  ModelplugError, never another exception.
- The text shown through TextDelta events always equals the final text.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug import ModelplugError
from modelplug.contract.types import Done, Response, TextDelta
from modelplug.testing import examples
from modelplug_kit.testing import load_recording, split_events

RECORDINGS = Path(__file__).parent / "recordings"
RECORDED = sorted(RECORDINGS.glob("*.sse"))
SHARED = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
_clients: dict[int, Any] = {}


def client_for(compat: Any, wire_server: Any) -> Any:
    """One client for every example of a run (the fixtures are shared by them)."""
    return _clients.get(id(wire_server)) or _clients.setdefault(id(wire_server), compat())


def outcome(client: Any) -> tuple[str, Any]:
    """("response", the Response) or ("error", its class and message); the deltas'
    text is checked against the final text on the way."""
    try:
        events = list(client.stream("wire/m", "hi"))
    except ModelplugError as error:
        return "error", (type(error).__name__, getattr(error, "error_class", None), str(error))
    done = events[-1]
    assert isinstance(done, Done)
    assert [e for e in events if isinstance(e, Done)] == [done]
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    if done.response.stop_reason == "repetition":
        # The guard keeps what came before the loop and one copy of it: a prefix of
        # what was shown, the redundant copies trimmed.
        assert shown.startswith(done.response.text) and len(shown) > len(done.response.text)
    else:
        assert shown == done.response.text
    return "response", done.response


@SHARED
@given(index=st.integers(0, len(RECORDED) - 1), cuts=st.lists(st.floats(0, 1), max_size=8))
def test_any_split_of_a_recording_gives_the_same_outcome(compat, wire_server, index, cuts):
    data = load_recording(RECORDED[index])
    points = sorted({int(c * len(data)) for c in cuts} | {0, len(data)})
    pieces = [data[a:b] for a, b in itertools.pairwise(points) if b > a]
    client = client_for(compat, wire_server)
    wire_server.add(data)
    whole = outcome(client)
    wire_server.add(pieces)
    split = outcome(client)
    assert split == whole
    if whole[0] == "response":
        assert isinstance(whole[1], Response)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)


def mutate(value: Any, draw: Any) -> Any:
    """``value`` with one random place replaced by random JSON."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: mutate(value[key], draw)}
    if isinstance(value, list) and value and draw(st.booleans()):
        at = draw(st.integers(0, len(value) - 1))
        return [*value[:at], mutate(value[at], draw), *value[at + 1 :]]
    return draw(JSON)


@st.composite
def mutated_recording(draw: Any) -> list[bytes]:
    events = split_events(load_recording(draw(st.sampled_from(RECORDED))))
    out = []
    for event in events:
        action = draw(st.sampled_from(["keep"] * 6 + ["drop", "twice", "json", "bytes"]))
        if action == "drop":
            continue
        if action == "twice":
            out += [event, event]
        elif action == "json" and event.startswith(b"data: {"):
            value = json.loads(event[6:])
            out.append(b"data: " + json.dumps(mutate(value, draw)).encode() + b"\n\n")
        elif action == "bytes":
            at = draw(st.integers(0, len(event)))
            out.append(event[:at] + draw(st.binary(max_size=6)) + event[at:])
        else:
            out.append(event)
    if draw(st.booleans()):
        draw(st.randoms()).shuffle(out)
    return out or [b""]


@SHARED
@given(chunks=mutated_recording())
def test_mutated_recordings_end_in_a_response_or_a_classified_error(compat, wire_server, chunks):
    wire_server.add(chunks)
    kind, value = outcome(client_for(compat, wire_server))
    assert kind in ("response", "error")
    if kind == "error":
        assert value[1] is not None  # a ModelError carries its ErrorClass


TEXT = st.text(max_size=5)
TOOL_CALL = st.fixed_dictionaries(
    {},
    optional={
        "index": st.integers(-1, 2) | JSON,
        "id": st.sampled_from(["a", "b"]) | JSON,
        "extra_content": JSON,
        "function": st.fixed_dictionaries(
            {}, optional={"name": st.sampled_from(["f", "g"]) | JSON, "arguments": TEXT | JSON}
        )
        | JSON,
    },
)
DELTA = st.fixed_dictionaries(
    {},
    optional={
        "role": st.just("assistant"),
        "content": TEXT
        | st.lists(
            TEXT
            | st.fixed_dictionaries({"type": st.just("text"), "text": TEXT})
            | st.fixed_dictionaries({"type": st.just("thinking"), "thinking": TEXT | JSON})
            | JSON,
            max_size=3,
        )
        | JSON,
        "reasoning_content": TEXT | JSON,
        "refusal": TEXT,
        "tool_calls": st.lists(TOOL_CALL | JSON, max_size=2) | JSON,
    },
)
CHUNK = st.fixed_dictionaries(
    {},
    optional={
        "choices": st.lists(
            st.fixed_dictionaries(
                {"delta": DELTA},
                optional={
                    "index": st.integers(0, 1),
                    "finish_reason": st.sampled_from(["stop", "length", "tool_calls"]) | JSON,
                },
            ),
            max_size=2,
        )
        | JSON,
        "usage": st.fixed_dictionaries(
            {"prompt_tokens": st.integers(-1, 9), "completion_tokens": st.integers(-1, 9)},
            optional={
                "total_tokens": st.integers(0, 30),
                "prompt_tokens_details": JSON,
                "completion_tokens_details": st.fixed_dictionaries(
                    {"reasoning_tokens": st.integers(-1, 9) | JSON}
                ),
            },
        )
        | JSON,
        "x_groq": JSON,
        "error": JSON,
    },
)
EVENT = CHUNK.map(lambda c: f"data: {json.dumps(c)}\n\n".encode()) | st.sampled_from(
    [b"data: [DONE]\n\n", b": comment\n\n", b"event: error\ndata: oops\n\n", b"data: {\n\n"]
)


@SHARED
@given(events=st.lists(EVENT, max_size=8))
def test_random_event_sequences_end_in_a_response_or_a_classified_error(
    compat, wire_server, events
):
    wire_server.add(events or [b""])
    kind, value = outcome(client_for(compat, wire_server))
    assert kind in ("response", "error")
    if kind == "error":
        assert value[1] is not None
