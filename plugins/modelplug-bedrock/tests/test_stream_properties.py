"""Property tests (hypothesis) of reading ConverseStream, through the loopback wire
server, the kit's HTTP path and botocore's event-stream parser:

- any way the network cuts a recording gives the same Response and the same deltas;
- mutated bytes, and frames whose CRCs hold around lengths and headers that do not fit,
  end in a Response or in the plugin's own classified error, never another exception
  (which the client would report as kind "other");
- the text shown through deltas is the final text, or the start of it before an error.
"""

from __future__ import annotations

import itertools
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug import ModelError, TruncatedToolCallError
from modelplug.contract.types import Done, Event, Response, TextDelta
from modelplug_bedrock.errors import BedrockError
from modelplug_kit.testing import load_recording

RECORDED = Path(__file__).parent / "recorded"
CONTENT_TYPE = "application/vnd.amazon.eventstream"
RECORDINGS = ["text", "tool_use", "reasoning", "redacted", "tool_use_cut_at_max_tokens"]


def recorded(name: str) -> bytes:
    return load_recording(RECORDED / name)


def frames_of(data: bytes) -> list[bytes]:
    """The frames of a recording, by each prelude's total length."""
    frames, at = [], 0
    while at < len(data):
        (total,) = struct.unpack_from(">I", data, at)
        frames.append(data[at : at + total])
        at += total
    return frames


ALL_FRAMES = [f for name in RECORDINGS for f in frames_of(recorded(f"{name}.eventstream"))]


def relaxed(examples: int) -> settings:
    """No deadline (a call takes a few ms, more on a busy machine); one client and one
    server shared by the examples on purpose."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


def run(client: Any, server: Any, chunks: list[bytes]) -> tuple[list[Event], Any]:
    server.add(chunks, path="/model/m/converse-stream", content_type=CONTENT_TYPE)
    events: list[Event] = []
    try:
        for event in client.stream("bedrock/m", "hi"):
            events.append(event)
    except TruncatedToolCallError as exc:
        # Core's refusal of a cut tool call: the Response the plugin ended with is on it,
        # and is checked as any other.
        return events, exc.partial
    except ModelError as exc:
        return events, exc
    done = events[-1]
    assert isinstance(done, Done)
    return events, done.response


def shown(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def check_outcome(events: list[Event], outcome: Response | ModelError) -> None:
    """A Response whose deltas are its text, or the plugin's own classified error."""
    if isinstance(outcome, ModelError):
        assert isinstance(outcome, BedrockError), (type(outcome), outcome, outcome.__cause__)
        assert outcome.error_class.kind != "other", outcome
        if outcome.partial is not None:
            assert shown(events).startswith(outcome.partial.text)
        return
    assert shown(events) == outcome.text


def cut(data: bytes, points: list[int]) -> list[bytes]:
    edges = [0, *sorted({p % (len(data) + 1) for p in points}), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges) if b > a]


@pytest.fixture
def signed(client: Any) -> Any:
    return client()


@pytest.mark.parametrize("name", RECORDINGS)
def test_any_cut_of_a_recording_gives_the_same_response(signed, wire_server, name):
    data = recorded(f"{name}.eventstream")
    whole_events, whole = run(signed, wire_server, [data])
    assert isinstance(whole, Response), whole
    check_outcome(whole_events, whole)

    @relaxed(15)
    @given(st.lists(st.integers(min_value=0), min_size=1, max_size=30))
    def split(points: list[int]) -> None:
        events, response = run(signed, wire_server, cut(data, points))
        assert response == whole
        assert shown(events) == shown(whole_events)

    split()


@relaxed(120)
@given(
    name=st.sampled_from(RECORDINGS),
    position=st.integers(min_value=0),
    junk=st.binary(max_size=8),
    drop=st.integers(min_value=0, max_value=6),
    points=st.lists(st.integers(min_value=0), max_size=4),
)
def test_mutated_bytes_end_in_a_response_or_a_classified_error(
    signed, wire_server, name, position, junk, drop, points
):
    data = recorded(f"{name}.eventstream")
    at = position % (len(data) + 1)
    mutated = data[:at] + junk + data[at + drop :]
    events, outcome = run(signed, wire_server, cut(mutated, points) or [b""])
    check_outcome(events, outcome)


@st.composite
def crc_valid_frame(draw: st.DrawFn) -> bytes:
    """A frame both of whose CRCs hold, around a prelude whose lengths may not fit the
    bytes (the total shorter or longer than what follows, the headers length past the
    total) and header bytes that may not parse."""
    headers = draw(
        st.one_of(
            st.binary(max_size=24),
            st.lists(
                st.sampled_from([b"\x01a", b"\x07", b"\x00\x02", b"hi", b"\xff", b"\x09"])
            ).map(b"".join),
        )
    )
    payload = draw(st.binary(max_size=16))
    fitting = 16 + len(headers) + len(payload)
    total = draw(st.one_of(st.just(fitting), st.integers(min_value=0, max_value=fitting + 8)))
    headers_length = draw(st.one_of(st.just(len(headers)), st.integers(0, 64)))
    prelude = struct.pack(">II", total, headers_length)
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    return body + struct.pack(">I", zlib.crc32(body[: max(total - 4, 0)]))


@relaxed(150)
@given(
    before=st.integers(min_value=0, max_value=4),
    odd=st.lists(crc_valid_frame(), min_size=1, max_size=3),
    after=st.lists(st.sampled_from(ALL_FRAMES), max_size=3),
    joined=st.booleans(),
)
def test_frames_whose_crcs_hold_but_not_their_shape_end_in_a_response_or_a_classified_error(
    signed, wire_server, before, odd, after, joined
):
    frames = [*frames_of(recorded("text.eventstream"))[:before], *odd, *after]
    events, outcome = run(signed, wire_server, [b"".join(frames)] if joined else frames)
    check_outcome(events, outcome)
