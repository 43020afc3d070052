"""Holding text while streaming: what may still become a call is not shown yet."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


def hold(kit: SimpleNamespace, text: str, mode: str) -> int | None:
    result = kit.parse(text, mode=mode, final=False)
    assert result.text == text  # with final=False the input comes back unchanged
    assert result.calls == []
    held: int | None = result.hold_from
    return held


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("  \n ", 0),
        ("{", 0),
        ('  {"na', 0),
        ("[", 0),
        ("[ {", 0),
        ("`", 0),
        ("```", 0),
        ("```js", 0),
        ("<", 0),
        ("<tool_c", 0),
        (CALL, 0),
        (CALL + "\n", 0),
        ("```json\n" + CALL, 0),
        ("Hello", None),
        ("{x", None),
        ('{"city"', None),
        ("[1", None),
        ("[[", None),
        ("`x", None),
        ("```py", None),
        ("```jsonx", None),
        ("<b", None),
        (CALL + " and", None),
        ('{"name": "nope", "arguments": {}}', None),
    ],
)
def test_whole_mode_holds_the_reply_until_its_start_rules_a_call_out(
    kit: SimpleNamespace, text: str, expected: int | None
) -> None:
    assert hold(kit, text, "whole") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello", None),
        ("Hello\n", 6),
        ("Hello\nworld", None),
        ("Hello\n  ", 6),
        ("Hello\n{", 6),
        ("Hello\n  {", 6),
        ('Hello\n{"name": "get_', 6),
        ("Hello\n[{", 6),
        ("Hello\n```", 6),
        ("Hello\n```json\n{", 6),
        ("Hello\n<tool", 6),
        ("Hello\n" + CALL, 6),
        ("Hello\n" + CALL + "\nBye", 6),
        ("Hello\n" + CALL + "\nBye\n" + CALL, 6),
        ("Hello\n{x", None),
        ("Hello\n[1] see", None),
        ("Hello\n```python\n{", None),
        ("Hello\n```python\n" + CALL + "\n", None),
        ("Hello\n```python\nx\n```\n{", 22),
        ("Hello\n<b>", None),
        ("Hello\n" + CALL + " no", None),
        ('Hello\n{"name": "nope", "arguments": {}}\n', 40),  # the empty line after it
        ("Hello {", None),
    ],
)
def test_lines_mode_holds_from_the_first_line_that_can_start_a_call(
    kit: SimpleNamespace, text: str, expected: int | None
) -> None:
    assert hold(kit, text, "lines") == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hi\n@", 3),
        ("Hi\n@@call get_we", 3),
        ("Hi\n@@call get_weather\n{ city: ~~~\nbody", 3),
        ("Hi\n@x", None),
        ("Hi\n@@calls", None),
        ("Hi\n@@call nope\n", None),
        ("Hi {", None),
    ],
)
def test_heredoc_mode_holds_from_a_call_line(
    kit: SimpleNamespace, text: str, expected: int | None
) -> None:
    assert hold(kit, text, "heredoc") == expected


def test_off_mode_holds_nothing(kit: SimpleNamespace) -> None:
    assert hold(kit, CALL, "off") is None


def test_lines_mode_shows_each_prose_line_at_once_and_never_the_call(
    kit: SimpleNamespace,
) -> None:
    reply = f"Let me check.\n{CALL}\nDone."
    streamed = kit.stream(list(reply), "lines")

    shown = streamed.shown_text
    assert shown == "Let me check.\n"
    # Each prose character is shown on the delta that brought it.
    assert streamed.shown[: len("Let me check.\n")] == list("Let me check.\n")
    assert streamed.rest == "Done."
    assert streamed.prose == "Let me check.\nDone."
    assert kit.names_and_inputs(streamed.calls) == [("get_weather", {"city": "Paris"})]


def test_whole_mode_releases_held_text_once_a_call_is_ruled_out(kit: SimpleNamespace) -> None:
    reply = '{"name": "get_weather", "arguments": {"city": "Paris"}} is what I would send.'
    streamed = kit.stream(list(reply), "whole")
    cut = reply.index(" is")
    assert all(piece == "" for piece in streamed.shown[:cut])
    assert streamed.shown[cut + 1] == reply[: cut + 2]  # the held start comes out at once
    assert streamed.shown_text + streamed.rest == reply
    assert streamed.calls == []


def test_whole_mode_shows_nothing_of_a_call_reply(kit: SimpleNamespace) -> None:
    reply = f"```json\n{CALL}\n```"
    streamed = kit.stream([reply[:5], reply[5:30], reply[30:]], "whole")
    assert streamed.shown_text == ""
    assert (streamed.rest, streamed.prose) == ("", "")
    assert len(streamed.calls) == 1


def test_at_the_end_held_prose_is_released_without_the_calls(kit: SimpleNamespace) -> None:
    reply = f"Plan:\n{CALL}\nand\n{{not a call}}\n"
    streamed = kit.stream(list(reply), "lines")
    assert streamed.shown_text == "Plan:\n"
    assert streamed.rest == "and\n{not a call}\n"
    assert len(streamed.calls) == 1


def test_a_rejected_candidate_is_released_and_later_lines_still_shown(
    kit: SimpleNamespace,
) -> None:
    reply = "[1] first note\n{draft}\nplain\n"
    streamed = kit.stream(list(reply), "lines")
    assert streamed.shown_text == reply
    assert streamed.rest == ""


def test_the_docs_example(kit: SimpleNamespace) -> None:
    """The Example of docs/plugins/textcalls.md, step by step."""
    held = kit.client.held_text(kit.TOOLS, "lines")
    first = held.feed('Let me look.\n{"name": "get_')
    second = held.feed('weather", "arguments": {"city": "Paris"}}\nOne moment.')
    rest, prose, calls = held.finish()
    assert (first, second, rest) == ("Let me look.\n", "", "One moment.")
    assert prose == "Let me look.\nOne moment."
    assert kit.names_and_inputs(calls) == [("get_weather", {"city": "Paris"})]
