"""The hook: accepted forms in every mode, the rules that keep text as text, bad input."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import pytest
from modelplug.contract.errors import TextCallError
from modelplug.contract.types import ToolSpec, ToolUseBlock
from modelplug_textcalls.parse import STATE_KEY

WEATHER = ("get_weather", {"city": "Paris"})
WRITE = ("write_file", {"path": "a.txt", "content": "hi\n", "mode": 420, "tags": ["x"]})


def test_modelplug_parse_text_tool_calls(kit: SimpleNamespace) -> None:
    reply = 'Let me look.\n{"name": "get_weather", "arguments": {"city": "Paris"}}\nOne moment.'

    result = kit.parse(reply, mode="lines")

    assert result.text == "Let me look.\nOne moment."
    assert kit.names_and_inputs(result.calls) == [WEATHER]
    assert result.calls[0].id.startswith("call_") and len(result.calls[0].id) == 29
    assert result.hold_from is None
    assert result.problems == []


# ------------------------------------------------------------------ accepted forms


@pytest.mark.parametrize("mode", ["whole", "lines"])
@pytest.mark.parametrize("key", ["arguments", "parameters"])
def test_every_accepted_form_is_read_in_whole_and_lines_mode(
    kit: SimpleNamespace, mode: str, form: str, key: str
) -> None:
    calls = [WEATHER] if form == "alone" else [WEATHER, WRITE]
    reply = kit.render(calls, form, key)

    result = kit.parse(reply, mode=mode)

    assert kit.names_and_inputs(result.calls) == calls
    assert result.text == ""
    assert result.problems == []


def test_every_accepted_form_stays_text_in_off_mode(kit: SimpleNamespace, form: str) -> None:
    calls = [WEATHER] if form == "alone" else [WEATHER, WRITE]
    reply = kit.render(calls, form)

    result = kit.parse(reply, mode="off")

    assert result.text == reply
    assert result.calls == []
    assert kit.parse(reply, mode="off", final=False).hold_from is None


@pytest.mark.parametrize("form", ["alone", "array", "fence", "tag"])
def test_json_forms_are_not_the_heredoc_dialect(kit: SimpleNamespace, form: str) -> None:
    reply = kit.render([WEATHER], form)
    result = kit.parse(reply, mode="heredoc")
    assert (result.text, result.calls) == (reply, [])


def test_surrounding_whitespace_and_indentation_are_allowed(kit: SimpleNamespace) -> None:
    call = kit.call_json(*WEATHER)
    assert kit.names_and_inputs(kit.parse(f"\n\n  {call}  \n\n", mode="whole").calls) == [WEATHER]
    result = kit.parse(f"Sure:\n    {call}\r\nDone.", mode="lines")
    assert kit.names_and_inputs(result.calls) == [WEATHER]
    assert result.text == "Sure:\nDone."


def test_fence_info_is_json_in_any_case_with_longer_fences(kit: SimpleNamespace) -> None:
    call = kit.call_json(*WEATHER)
    for reply in (f"```JSON\n{call}\n```", f"````json \n{call}\n`````", f"``` json\n{call}\n```"):
        assert kit.names_and_inputs(kit.parse(reply, mode="whole").calls) == [WEATHER], reply


def test_tag_may_hold_the_call_on_one_line_and_several_tags_follow(kit: SimpleNamespace) -> None:
    one = f"<tool_call>{kit.call_json(*WEATHER)}</tool_call>"
    two = f"<tool_call>{kit.call_json(*WRITE)}</tool_call>"
    result = kit.parse(f"{one}\n{two}", mode="whole")
    assert kit.names_and_inputs(result.calls) == [WEATHER, WRITE]


def test_two_calls_in_an_array(kit: SimpleNamespace) -> None:
    reply = json.dumps(
        [
            {"name": "get_weather", "arguments": {"city": "Paris"}},
            {"name": "get_weather", "parameters": {"city": "Oslo"}},
        ]
    )
    for mode in ("whole", "lines"):
        result = kit.parse(reply, mode=mode)
        assert kit.names_and_inputs(result.calls) == [
            ("get_weather", {"city": "Paris"}),
            ("get_weather", {"city": "Oslo"}),
        ]
        assert result.calls[0].id != result.calls[1].id


def test_prose_before_and_after_in_lines_mode(kit: SimpleNamespace) -> None:
    reply = (
        "I will check the weather first.\n"
        f"{kit.call_json(*WEATHER)}\n"
        "Then write the file:\n"
        "```json\n"
        f"{kit.call_json(*WRITE, indent=2)}\n"
        "```\n"
        "That is all."
    )
    result = kit.parse(reply, mode="lines")
    assert kit.names_and_inputs(result.calls) == [WEATHER, WRITE]
    assert result.text == "I will check the weather first.\nThen write the file:\nThat is all."


def test_calls_get_fresh_ids_each_time(kit: SimpleNamespace) -> None:
    reply = kit.call_json(*WEATHER)
    first = kit.parse(reply).calls[0].id
    second = kit.parse(reply).calls[0].id
    assert first != second


def test_tool_use_blocks_are_ordinary(kit: SimpleNamespace) -> None:
    (block,) = kit.parse(kit.call_json(*WRITE)).calls
    assert isinstance(block, ToolUseBlock)
    assert block.type == "tool_use"
    assert block.input == WRITE[1]


# ------------------------------------------------------- rules that keep text as text


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ('{"name": "rm_rf", "arguments": {}}', "unknown tool 'rm_rf'"),
        ('{"name": "get_weather", "arguments": "{\\"city\\": 1}"}', "must be a JSON object"),
        ('{"name": "get_weather", "arguments": [1]}', "must be a JSON object"),
        ('{"name": "get_weather", "arguments": null}', "must be a JSON object"),
        ('{"name": "get_weather"}', "exactly one of"),
        ('{"arguments": {}}', 'needs a "name"'),
        ('{"name": "get_weather", "arguments": {}, "parameters": {}}', "exactly one of"),
        ('{"name": "get_weather", "arguments": {}, "id": "x"}', "unexpected key 'id'"),
        ('{"name": 7, "arguments": {}}', "must be a string"),
        ('{"name": "get_weather", "arguments": {"a": 1, "a": 2}}', "duplicate key"),
        ('{"name": "get_weather", "arguments": {"a": NaN}}', "unexpected character"),
        ('{"name": "get_weather", "arguments": {"a": 1,}}', "not valid JSON"),
        ('[{"name": "get_weather", "arguments": {}}, 3]', "must be a JSON object"),
        ('[{"name": "get_weather", "arguments": {}}, [3]]', "must be a JSON object"),
        ('{"name": "get_weather", "arguments": {"a": "x\ny"}}', "raw control character"),
        ('{"name": "get_weather", "arguments": {}]', "unmatched"),
        ('{"name": "get_weather", "arguments": {', "never closed"),
        ("```json\n[]\n```", "an empty array"),
        ('```json\n{"a": 1}\n```', 'needs a "name"'),
        ("```json\nnot json\n```", "not valid JSON"),
        ('```json\n{"name": "get_weather", "arguments": {}}', "never closed"),
        ('<tool_call>{"name": "get_weather", "arguments": {}}', "never closed"),
        ("<tool_call>I would call the tool here</tool_call>", "not valid JSON"),
    ],
)
@pytest.mark.parametrize("mode", ["whole", "lines"])
def test_what_fails_stays_text_and_says_why(
    kit: SimpleNamespace, reply: str, problem: str, mode: str
) -> None:
    result = kit.parse(reply, mode=mode)
    assert result.calls == []
    assert result.text == reply
    assert any(problem in p for p in result.problems), result.problems


@pytest.mark.parametrize(
    "reply",
    [
        "Hello there.",
        "[1] see the docs",
        "{x} is a set",
        "`code` here",
        "<b>bold</b>",
        "``` python\nprint(1)\n```",
        "@@call get_weather\n{}",
        "",
        "   \n  ",
        '{"city": "Paris"}',
        '[{"city": "Paris"}]',
        "[[1]]",
    ],
)
@pytest.mark.parametrize("mode", ["whole", "lines"])
def test_text_that_never_looked_like_a_call_is_text_without_problems(
    kit: SimpleNamespace, reply: str, mode: str
) -> None:
    result = kit.parse(reply, mode=mode)
    assert (result.text, result.calls, result.problems) == (reply, [], [])


def test_whole_mode_one_failing_part_makes_all_text(kit: SimpleNamespace) -> None:
    good = kit.call_json(*WEATHER)
    bad = '{"name": "launch_missiles", "arguments": {}}'
    for reply in (f"{good}\n{bad}", f"[{good}, {bad}]", f"{good}\n<tool_call>{bad}</tool_call>"):
        result = kit.parse(reply, mode="whole")
        assert (result.text, result.calls) == (reply, []), reply
        assert any("launch_missiles" in p for p in result.problems)


@pytest.mark.parametrize(
    "reply",
    [
        'Here you go: {"name": "get_weather", "arguments": {"city": "Paris"}}',
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\nThat was the call.',
        '{"name": "get_weather", "arguments": {"city": "Paris"}} and more',
        "```python\nx = 1\n```",
        '```python\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
    ],
)
def test_whole_mode_keeps_replies_with_prose_as_text(kit: SimpleNamespace, reply: str) -> None:
    result = kit.parse(reply, mode="whole")
    assert (result.text, result.calls) == (reply, [])


def test_lines_mode_a_call_in_the_middle_of_a_sentence_never_runs(kit: SimpleNamespace) -> None:
    call = kit.call_json(*WEATHER)
    for reply in (
        f"You could write {call} to ask.",
        f"You could write\n{call} to ask.",
        f"- {call}",
        f"> <tool_call>{call}</tool_call>",
        f"Run this: <tool_call>{call}</tool_call>",
    ):
        result = kit.parse(reply, mode="lines")
        assert (result.text, result.calls) == (reply, []), reply


def test_lines_mode_text_after_a_call_on_its_line_keeps_the_line_as_text(
    kit: SimpleNamespace,
) -> None:
    reply = f"{kit.call_json(*WEATHER)} <- this one\n{kit.call_json(*WRITE)}"
    result = kit.parse(reply, mode="lines")
    assert kit.names_and_inputs(result.calls) == [WRITE]
    assert result.text == f"{kit.call_json(*WEATHER)} <- this one\n"
    assert any("own line" in p for p in result.problems)


def test_lines_mode_a_failing_line_stays_text_and_the_others_run(kit: SimpleNamespace) -> None:
    bad = '{"name": "rm_rf", "arguments": {"path": "/"}}'
    reply = f"First:\n{bad}\n{kit.call_json(*WEATHER)}\nDone."
    result = kit.parse(reply, mode="lines")
    assert kit.names_and_inputs(result.calls) == [WEATHER]
    assert result.text == f"First:\n{bad}\nDone."
    assert any("rm_rf" in p for p in result.problems)


def test_lines_mode_a_fence_of_another_language_stays_text_as_a_whole(
    kit: SimpleNamespace,
) -> None:
    inner = kit.call_json(*WEATHER)
    reply = f"Example:\n```python\nx = 1\n{inner}\n<tool_call>{inner}</tool_call>\n```\nEnd."
    result = kit.parse(reply, mode="lines")
    assert (result.text, result.calls, result.problems) == (reply, [], [])


def test_lines_mode_an_unclosed_foreign_fence_keeps_the_rest_as_text(
    kit: SimpleNamespace,
) -> None:
    reply = f"```sh\necho hi\n{kit.call_json(*WEATHER)}\n"
    result = kit.parse(reply, mode="lines")
    assert (result.text, result.calls) == (reply, [])


def test_lines_mode_a_failing_json_fence_stays_text_as_a_whole(kit: SimpleNamespace) -> None:
    reply = f'```json\n{{"example": true}}\n```\n{kit.call_json(*WEATHER)}'
    result = kit.parse(reply, mode="lines")
    assert kit.names_and_inputs(result.calls) == [WEATHER]
    assert result.text == '```json\n{"example": true}\n```\n'


def test_no_tools_means_no_calls(kit: SimpleNamespace) -> None:
    reply = kit.call_json(*WEATHER)
    result = kit.parse(reply, tools=[])
    assert (result.text, result.calls) == (reply, [])
    assert kit.parse(reply, tools=[], final=False).hold_from is None


def test_a_name_must_be_a_tool_of_this_request(kit: SimpleNamespace) -> None:
    reply = kit.call_json(*WEATHER)
    result = kit.parse(reply, tools=[ToolSpec(name="search")])
    assert result.calls == []
    assert "this request's tools are search" in result.problems[0]


def test_deep_nesting_is_refused_without_recursion_errors(kit: SimpleNamespace) -> None:
    deep = '{"name": "get_weather", "arguments": {"a": ' + "[" * 5000 + "]" * 5000 + "}}"
    for mode in ("whole", "lines"):
        result = kit.parse(deep, mode=mode)
        assert result.calls == []
        assert any("deeper" in p for p in result.problems)
    fenced = "```json\n" + deep + "\n```"
    assert kit.parse(fenced).calls == []


# ---------------------------------------------------------------- modes and input


def test_unknown_mode_is_left_to_another_reader(kit: SimpleNamespace) -> None:
    assert kit.parse(kit.call_json(*WEATHER), mode="xml-ish") is None
    assert kit.parse(kit.call_json(*WEATHER), mode="xml-ish", final=False) is None


def test_missing_mode_means_whole(kit: SimpleNamespace) -> None:
    assert kit.names_and_inputs(kit.parse(kit.call_json(*WEATHER), mode="").calls) == [WEATHER]


@pytest.mark.parametrize(
    ("field", "value"),
    [("tools", "get_weather"), ("tools", [{"nom": "x"}]), ("tools", [3]), ("state", [])],
)
def test_bad_input_raises_a_typed_error(kit: SimpleNamespace, field: str, value: object) -> None:
    kwargs: dict[str, object] = {"text": "{}", "tools": kit.TOOLS, "state": None}
    kwargs[field] = value
    with pytest.raises(TextCallError):
        kit.parse(**kwargs)


def test_text_must_be_a_string(kit: SimpleNamespace) -> None:
    with pytest.raises(TextCallError, match="text must be a string"):
        kit.parse(b"{}")


def test_tools_may_be_plain_mappings(kit: SimpleNamespace) -> None:
    result = kit.parse(kit.call_json(*WEATHER), tools=[{"name": "get_weather"}])
    assert kit.names_and_inputs(result.calls) == [WEATHER]


# --------------------------------------------------------------------------- state


def test_state_keeps_one_reader_for_the_reply_and_drops_it_at_the_end(
    kit: SimpleNamespace,
) -> None:
    state: dict[str, object] = {}
    reply = "Look:\n" + kit.call_json(*WEATHER)
    kit.parse(reply[:10], mode="lines", final=False, state=state)
    reader = state[STATE_KEY]
    kit.parse(reply[:20], mode="lines", final=False, state=state)
    assert state[STATE_KEY] is reader
    result = kit.parse(reply, mode="lines", final=True, state=state)
    assert kit.names_and_inputs(result.calls) == [WEATHER]
    assert STATE_KEY not in state


def test_a_state_reused_for_another_text_starts_afresh(kit: SimpleNamespace) -> None:
    state: dict[str, object] = {}
    kit.parse("Plain prose that rules a call out", mode="whole", final=False, state=state)
    other = kit.call_json(*WEATHER)
    result = kit.parse(other, mode="whole", final=True, state=state)
    assert kit.names_and_inputs(result.calls) == [WEATHER]
    kit.parse("Plain", mode="whole", final=False, state=state)
    assert kit.parse("{", mode="lines", final=False, state=state).hold_from == 0


def test_the_reader_keeps_no_reference_to_the_reply(kit: SimpleNamespace) -> None:
    # A kept reference would stop CPython from growing the caller's string in place,
    # and every delta would copy the whole reply.
    state: dict[str, object] = {}
    text = "".join(["Some prose\n", kit.call_json(*WEATHER)])
    before = sys.getrefcount(text)
    result = kit.parse(text, mode="lines", final=False, state=state)
    del result
    assert sys.getrefcount(text) == before


def test_a_fence_without_a_language_stays_text(kit: SimpleNamespace) -> None:
    reply = f"```\n{kit.call_json(*WEATHER)}\n```"
    for mode in ("whole", "lines"):
        result = kit.parse(reply, mode=mode)
        assert (result.text, result.calls) == (reply, []), mode


def test_deep_nesting_is_refused_whatever_the_recursion_limit(kit: SimpleNamespace) -> None:
    import sys

    deep = '{"name": "get_weather", "arguments": {"a": ' + "[" * 5000 + "]" * 5000 + "}}"
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)  # what mypy, for one, sets in the same process
    try:
        assert kit.parse("```json\n" + deep + "\n```").calls == []
        assert kit.parse(deep).calls == []
    finally:
        sys.setrecursionlimit(limit)
