"""The SSE framer's fast paths (one ``data:`` line; an ``event:`` line and one ``data:``
line) give what the general reader gives, however the bytes are split."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st
from modelplug_kit.sse import SSEFramer, _parse_event

VALUE = st.text(alphabet='ab: {}"é', max_size=8)
LINE = st.builds(
    lambda field, space, value: f"{field}:{' ' if space else ''}{value}",
    st.sampled_from(["data", "event", "id", ""]),
    st.booleans(),
    VALUE,
)
EVENT = st.lists(LINE, min_size=1, max_size=4).map("\n".join)


@given(events=st.lists(EVENT, max_size=6), cuts=st.lists(st.integers(0, 400), max_size=6))
def test_the_fast_paths_agree_with_the_general_reader(events, cuts):
    data = "".join(e + "\n\n" for e in events).encode()
    expected = [p for p in (_parse_event(e) for e in events) if p is not None]
    framer = SSEFramer()
    edges = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    got = [pair for a, b in itertools.pairwise(edges) for pair in framer.feed(data[a:b])]
    got += framer.close()
    assert got == expected


def test_the_named_form():
    framer = SSEFramer()
    assert framer.feed(b'event: response.output_text.delta\ndata: {"delta":"a"}\n\n') == [
        ("response.output_text.delta", '{"delta":"a"}')
    ]
    assert framer.feed(b"event: x\ndata: 1\ndata: 2\n\nevent: y\nid: 3\ndata: z\n\n") == [
        ("x", "1\n2"),
        ("y", "z"),
    ]
