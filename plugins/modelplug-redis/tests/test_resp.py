"""RESP2 as the scripts' link writes and reads it: commands packed as bulk strings,
replies read across any split of the bytes, error replies as values, and bytes that
are not RESP a ProtocolError and nothing else.

The reply bytes below are written by hand from the protocol's specification (the
"RESP protocol spec" page of the Redis documentation), not recorded from a server;
tests/test_script_link.py reads a real redis-server's replies."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplug.testing import examples
from modelplug_redis.resp import MAX_DEPTH, ProtocolError, Replies, ReplyError, pack

SPEC_REPLIES = (
    b"+OK\r\n"
    b"-NOSCRIPT No matching script. Please use EVAL.\r\n"
    b":1000\r\n"
    b":-3\r\n"
    b"$5\r\nhello\r\n"
    b"$0\r\n\r\n"
    b"$-1\r\n"
    b"*-1\r\n"
    b"*0\r\n"
    b"*3\r\n:0\r\n$3\r\nfoo\r\n*2\r\n:1\r\n$-1\r\n"
)


def plain(replies: list[Any]) -> list[Any]:
    """Replies with errors as (code, text) tuples, so they compare."""
    out: list[Any] = []
    for reply in replies:
        if isinstance(reply, ReplyError):
            out.append(("error", str(reply)))
        elif isinstance(reply, list):
            out.append(plain(reply))
        else:
            out.append(reply)
    return out


EXPECTED = [
    b"OK",
    ("error", "NOSCRIPT No matching script. Please use EVAL."),
    1000,
    -3,
    b"hello",
    b"",
    None,
    None,
    [],
    [0, b"foo", [1, None]],
]


def test_pack_writes_an_array_of_bulk_strings() -> None:
    assert pack(["EVALSHA", "abc", 2, "k1", b"k\r\n2", 1.5]) == (
        b"*6\r\n$7\r\nEVALSHA\r\n$3\r\nabc\r\n$1\r\n2\r\n$2\r\nk1\r\n$4\r\nk\r\n2\r\n$3\r\n1.5\r\n"
    )


def test_pack_refuses_a_bool() -> None:
    with pytest.raises(TypeError, match="bool"):
        pack(["SET", "k", True])


def test_every_kind_of_reply_is_read() -> None:
    replies = Replies().feed(SPEC_REPLIES)
    assert plain(replies) == EXPECTED
    assert replies[1].code == "NOSCRIPT"


@pytest.mark.parametrize("cut", range(1, len(SPEC_REPLIES)))
def test_replies_split_anywhere_come_out_whole_and_in_order(cut: int) -> None:
    reader = Replies()
    first = reader.feed(SPEC_REPLIES[:cut])
    rest = reader.feed(SPEC_REPLIES[cut:])
    assert plain(first + rest) == EXPECTED


def test_bytes_fed_one_at_a_time_give_the_same_replies() -> None:
    reader = Replies()
    got: list[Any] = []
    for i in range(len(SPEC_REPLIES)):
        got += reader.feed(SPEC_REPLIES[i : i + 1])
    assert plain(got) == EXPECTED


@pytest.mark.parametrize(
    "garbage",
    [b"?what\r\n", b":12x\r\n", b"$3\r\nabcd\r\n", b"$x\r\n", b"*1\r\n!\r\n"],
)
def test_bytes_that_are_not_resp_are_a_protocol_error(garbage: bytes) -> None:
    with pytest.raises(ProtocolError):
        Replies().feed(garbage)


def test_arrays_nested_too_deep_are_refused() -> None:
    deep = b"*1\r\n" * (MAX_DEPTH + 2) + b":1\r\n"
    with pytest.raises(ProtocolError, match="deeper"):
        Replies().feed(deep)


# -- properties -----------------------------------------------------------------

replies_strategy = st.recursive(
    st.one_of(
        st.integers(min_value=-(2**63), max_value=2**63 - 1),
        st.binary(max_size=40),
        st.none(),
        # An error's text: any line a server could send (no CR, LF or lone surrogate).
        st.text(
            alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
            max_size=20,
        ).map(lambda s: ("error", s)),
    ),
    lambda children: st.lists(children, max_size=5),
    max_leaves=20,
)


def encode(value: Any) -> bytes:
    """The server's side of RESP2, for the round trip."""
    if value is None:
        return b"$-1\r\n"
    if isinstance(value, int):
        return b":%d\r\n" % value
    if isinstance(value, bytes):
        return b"$%d\r\n%s\r\n" % (len(value), value)
    if isinstance(value, tuple):
        return b"-" + value[1].encode() + b"\r\n"
    return b"*%d\r\n" % len(value) + b"".join(encode(v) for v in value)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(replies_strategy, max_size=6), st.data())
def test_any_replies_in_any_chunks_read_back_the_same(values: list[Any], data: Any) -> None:
    wire = b"".join(encode(v) for v in values)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(wire)), max_size=8)))
    reader = Replies()
    got: list[Any] = []
    start = 0
    for cut in [*cuts, len(wire)]:
        got += reader.feed(wire[start:cut])
        start = cut
    assert plain(got) == values


@settings(max_examples=examples(500), deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_give_replies_or_a_protocol_error(data: bytes) -> None:
    try:
        replies = Replies().feed(data)
    except ProtocolError:
        return
    assert isinstance(replies, list)


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(0, 10_000), st.binary(max_size=4))
def test_mutated_replies_give_replies_or_a_protocol_error(at: int, inserted: bytes) -> None:
    at = at % len(SPEC_REPLIES)
    mutated = SPEC_REPLIES[:at] + inserted + SPEC_REPLIES[at + 1 :]
    try:
        replies = Replies().feed(mutated)
    except ProtocolError:
        return
    assert isinstance(replies, list)
