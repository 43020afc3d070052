"""The kit's SSE framer: whole events out of any split of the bytes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from modelplug_kit import SSEFramer

# Shapes seen on real wires: OpenAI's single data lines, OpenRouter's comments, the
# Responses API's named events, llama.cpp's error field, CRLF line ends.
STREAM = (
    b": OPENROUTER PROCESSING\n\n"
    b'data: {"a": 1}\n\n'
    b"event: response.output_text.delta\r\n"
    b'data: {"type": "response.output_text.delta", "delta": "h\xc3\xa9"}\r\n\r\n'
    b'data: {"multi":\ndata: "line"}\n\n'
    b'error: {"code": 400, "message": "context size exceeded"}\n\n'
    b"id: 7\ndata: [DONE]\n\n"
)
EXPECTED = [
    ("", '{"a": 1}'),
    ("response.output_text.delta", '{"type": "response.output_text.delta", "delta": "hé"}'),
    ("", '{"multi":\n"line"}'),
    ("error", '{"code": 400, "message": "context size exceeded"}'),
    ("", "[DONE]"),
]


def frame(chunks: list[bytes]) -> list[tuple[str, str]]:
    framer = SSEFramer()
    events = [event for chunk in chunks for event in framer.feed(chunk)]
    return events + framer.close()


def test_events_come_out_whole_with_their_names() -> None:
    assert frame([STREAM]) == EXPECTED


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_split_of_the_bytes_gives_the_same_events(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    assert frame(chunks) == EXPECTED


def test_a_last_event_without_its_blank_line_is_still_read() -> None:
    framer = SSEFramer()
    assert framer.feed(b'data: {"x": 1}\n\ndata: [DONE]\n') == [("", '{"x": 1}')]
    assert framer.pending == "data: [DONE]\n"
    assert framer.close() == [("", "[DONE]")]


@given(st.binary(max_size=300))
def test_any_bytes_give_strings_never_an_exception(data: bytes) -> None:
    for event, payload in frame([data]):
        assert isinstance(event, str) and isinstance(payload, str)
