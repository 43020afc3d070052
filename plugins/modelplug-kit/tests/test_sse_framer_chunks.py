"""The kit's SSEFramer: whole events out of any split of the bytes, the fast chunk of
plain data events and the general form giving the same events."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st
from modelplug_kit import SSEFramer


def frame(pieces: list[bytes]) -> list[tuple[str, str]]:
    framer = SSEFramer()
    out = [event for piece in pieces for event in framer.feed(piece)]
    return out + framer.close()


def test_plain_data_events_come_out_whole_in_order():
    framer = SSEFramer()
    assert framer.feed(b'data: {"a": 1}\n\ndata: {"b": 2}\n\ndata: {"c"') == [
        ("", '{"a": 1}'),
        ("", '{"b": 2}'),
    ]
    assert framer.pending == 'data: {"c"'
    assert framer.feed(b": 3}\n\n") == [("", '{"c": 3}')]


def test_named_events_comments_error_fields_and_multi_line_data():
    data = (
        b": keep-alive\n\n"
        b'event: error\ndata: {"x": 1}\n\n'
        b'error: {"code": 400}\n\n'
        b"data: one\ndata: two\n\n"
        b"data:no-space\n\n"
        b"id: 7\n\n"
        b"data: [DONE]"
    )
    assert frame([data]) == [
        ("error", '{"x": 1}'),
        ("error", '{"code": 400}'),
        ("", "one\ntwo"),
        ("", "no-space"),
        ("", "[DONE]"),
    ]


def test_a_chunk_of_plain_events_after_a_general_one():
    # The first event of the chunk is plain, a later one is not: the general way.
    assert frame([b"data: a\n\nevent: x\ndata: b\n\ndata: c\n\n"]) == [
        ("", "a"),
        ("x", "b"),
        ("", "c"),
    ]


EVENT = st.sampled_from(
    [
        b'data: {"k": "v"}\n\n',
        b"data: caf\xc3\xa9 \xe2\x98\x95\n\n",
        b": comment\n\n",
        b"event: error\ndata: e\n\n",
        b"data: a\ndata: b\n\n",
        b"data: crlf\r\n\r\n",
        b"data: [DONE]\n\n",
    ]
)


@given(events=st.lists(EVENT, max_size=10), cuts=st.lists(st.integers(0, 400), max_size=8))
def test_any_split_gives_the_events_of_the_whole(events, cuts):
    data = b"".join(events)
    points = sorted({c for c in cuts if c < len(data)} | {0, len(data)})
    pieces = [data[a:b] for a, b in itertools.pairwise(points)]
    assert frame(pieces) == frame([data])
    assert frame([data]) == frame([bytes([b]) for b in data])
