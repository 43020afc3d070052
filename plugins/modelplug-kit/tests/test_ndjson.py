"""The NDJSON framer of the plugin kit: bytes in, whole lines out, however the bytes are cut."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from modelplug.testing import examples
from modelplug_kit import NDJSONFramer

LINES = [
    '{"model":"llama3.2","message":{"role":"assistant","content":"The"},"done":false}',
    '{"model":"llama3.2","message":{"role":"assistant","content":" sky — é 日本"},"done":false}',
    '{"model":"llama3.2","message":{"role":"assistant","content":""},"done":true}',
]


def frame(chunks: list[bytes]) -> list[str]:
    framer = NDJSONFramer()
    out: list[str] = []
    for chunk in chunks:
        out.extend(framer.feed(chunk))
    out.extend(framer.close())
    return out


def test_a_chunk_gives_the_lines_it_completed_and_keeps_the_rest():
    framer = NDJSONFramer()
    assert framer.feed(b'{"a": 1}\n{"b"') == ['{"a": 1}']
    assert framer.pending == '{"b"'
    assert framer.feed(b": 2}\n") == ['{"b": 2}']
    assert framer.pending == ""


def test_crlf_line_ends_and_blank_lines_are_not_part_of_a_line():
    assert frame([b'{"a":1}\r\n\r\n{"b":2}\r', b"\n\n"]) == ['{"a":1}', '{"b":2}']


def test_a_last_line_without_newline_is_returned_at_close():
    framer = NDJSONFramer()
    assert framer.feed(b'{"a":1}\n{"cut":') == ['{"a":1}']
    assert framer.close() == ['{"cut":']
    assert framer.close() == []


def test_whitespace_left_at_the_end_is_no_line():
    assert frame([b'{"a":1}\n  \r']) == ['{"a":1}']


def test_a_character_split_between_chunks_is_joined():
    data = LINES[1].encode() + b"\n"
    cut = data.index("é".encode()) + 1  # inside the two bytes of é
    assert frame([data[:cut], data[cut:]]) == [LINES[1]]


def test_invalid_utf8_becomes_a_replacement_character_not_an_exception():
    lines = frame([b'{"a":"\xff"}\n'])
    assert lines == ['{"a":"\ufffd"}']


@settings(max_examples=examples(200), deadline=None)
@given(st.data())
def test_random_splits_give_the_same_lines(data: st.DataObject) -> None:
    body = ("\n".join(LINES) + "\n").encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=12)))
    chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    lines = frame(chunks)
    assert lines == LINES
    assert [json.loads(line)["done"] for line in lines] == [False, False, True]


@settings(max_examples=examples(200), deadline=None)
@given(st.binary(max_size=200), st.integers(1, 16))
def test_any_bytes_frame_without_an_exception(body: bytes, size: int) -> None:
    chunks = [body[i : i + size] for i in range(0, len(body), size)]
    lines = frame(chunks)
    assert all(line and "\n" not in line for line in lines)
