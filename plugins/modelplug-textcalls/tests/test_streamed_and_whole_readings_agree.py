"""Lines mode: a reply read whole and the same reply streamed in any cuts come to the
same prose and the same calls, and what was shown while streaming is a prefix of it.

A fence opener is where they used to part: a stream decided "another language" as soon
as the info string could no longer be ``json`` and never looked at the rest of the line,
while the whole reply saw a backtick later on it (inline code, no fence), or took an
over-long ``json`` info string as a json fence the stream had already given up on.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from modelplug.testing import examples

CALL = '{"name": "search", "arguments": {"q": "x"}}'

# Found by feeding random replies whole and in random cuts (about one in 13,000
# examples of the generic token soup): the stream walked ```x as a python-like fence
# to the end, so the call after it never ran; read whole, the line is inline code.
BACKTICK_LATE = ["```x", "`\n" + CALL]
# A json info string longer than the 64 characters a stream waits for: the stream
# took it for another language, the whole reply for a json fence never closed.
LONG_JSON_INFO = ["```json" + " " * 70, "\n" + CALL + "\n```\n" + CALL]

# Pieces of lines that decide what a fence opener is: the info string's words, its
# length around the 64-character limit, a backtick anywhere on the line.
INFOS = st.one_of(
    st.sampled_from(["json", "JSON", " json", "json ", "jso", "py", "x", "", "json x"]),
    st.integers(min_value=56, max_value=72).map(lambda n: "json" + " " * (n - 4)),
    st.integers(min_value=56, max_value=72).map(lambda n: "x" * n),
)


@st.composite
def opener_lines(draw: Any) -> str:
    info = draw(INFOS)
    if draw(st.booleans()):
        at = draw(st.integers(min_value=0, max_value=len(info) + 8))
        info = (info + " " * 8)[:at] + "`" + info[at:]
    return draw(st.sampled_from(["```", "````"])) + info


LINES = st.one_of(
    opener_lines(),
    st.just(CALL),  # a call after the opener is what tells the readings apart
    st.sampled_from(
        [
            "```",
            "````",
            "``` ",
            "Sure, let me look.",
            "",
            "[1] see",
            f"[{CALL}]",
            f"<tool_call>\n{CALL}\n</tool_call>",
            f"text {CALL}",
            "{",
        ]
    ),
)


@st.composite
def streamed_replies(draw: Any) -> list[str]:
    """A reply of such lines, as deltas cut at any places."""
    text = "\n".join(draw(st.lists(LINES, min_size=1, max_size=6)))
    places = draw(st.lists(st.integers(0, len(text)), max_size=len(text) // 4 + 3))
    bounds = [0, *sorted(set(places)), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def readings_agree(kit: SimpleNamespace, deltas: list[str]) -> None:
    text = "".join(deltas)
    whole = kit.parse(text, mode="lines")
    streamed = kit.stream(deltas, "lines")
    assert streamed.prose == whole.text
    assert kit.names_and_inputs(streamed.calls) == kit.names_and_inputs(whole.calls)
    assert streamed.shown_text + streamed.rest == whole.text


@settings(
    max_examples=examples(1000),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(deltas=streamed_replies())
@example(deltas=BACKTICK_LATE)
@example(deltas=LONG_JSON_INFO)
def test_lines_mode_reads_a_reply_cut_anywhere_as_it_reads_it_whole(
    kit: SimpleNamespace, deltas: list[str]
) -> None:
    readings_agree(kit, deltas)


@pytest.mark.parametrize("at", range(1, len("```x`\n" + CALL)))
def test_a_backtick_late_on_a_fence_opener_is_inline_code_wherever_the_stream_is_cut(
    kit: SimpleNamespace, at: int
) -> None:
    text = "".join(BACKTICK_LATE)
    streamed = kit.stream([text[:at], text[at:]], "lines")
    assert kit.names_and_inputs(streamed.calls) == [("search", {"q": "x"})]
    assert streamed.prose == "```x`\n"
    assert streamed.shown_text + streamed.rest == "```x`\n"


def test_a_json_info_string_longer_than_64_characters_opens_no_json_fence(
    kit: SimpleNamespace,
) -> None:
    text = "".join(LONG_JSON_INFO)
    whole = kit.parse(text, mode="lines")
    # Text as a whole, like a fence of another language; the call after it runs.
    assert kit.names_and_inputs(whole.calls) == [("search", {"q": "x"})]
    assert whole.text == text[: -len(CALL)]
    for deltas in (LONG_JSON_INFO, [text]):
        streamed = kit.stream(deltas, "lines")
        assert (streamed.prose, kit.names_and_inputs(streamed.calls)) == (
            whole.text,
            kit.names_and_inputs(whole.calls),
        )
