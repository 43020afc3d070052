"""Property tests: text stays text, calls read back exactly, streaming never shows a
call, and no input raises anything but a typed error."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from modelplug.contract.errors import ModelplugError
from modelplug.contract.held_text import HeldText
from modelplug.testing import examples
from modelplug_textcalls.heredoc_json import HEREDOC_SENTINEL
from modelplug_textcalls.parse import read_text_calls

SETTINGS = settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# ------------------------------------------------------------------------ strategies

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**12), max_value=10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
arguments = st.dictionaries(st.text(max_size=8), json_values, max_size=4)


def calls_lists(names: Sequence[str]) -> st.SearchStrategy[list[tuple[str, dict[str, Any]]]]:
    return st.lists(st.tuples(st.sampled_from(names), arguments), min_size=1, max_size=3)


STARTERS = "{[`<@"
prose_first = st.characters(
    blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc"), blacklist_characters=STARTERS
)
prose_rest = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=30
)
TRICKY_PROSE = [
    "[1] see the note",
    "{curly} braces",
    "`inline` code and ``more``",
    "<b>bold</b> and <tool>",
    "```python\nx = {1: 2}\n[3]\n```",
    '```text\n{"name": "search", "arguments": {}}\n```',
    'Call it like {"name": "search", "arguments": {}} later',
    "@someone said @@call",
    "",
    "   ",
]
prose_lines = st.one_of(
    st.tuples(prose_first, prose_rest).map("".join), st.sampled_from(TRICKY_PROSE)
)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _can_be_body(value: str) -> bool:
    return all(line.rstrip(" \t\r") != HEREDOC_SENTINEL for line in value.split("\n"))


def render_heredoc(name: str, args: dict[str, Any], draw: Any) -> str:
    members = []
    for key, value in args.items():
        shown_key = key if _IDENT.fullmatch(key) and draw(st.booleans()) else json.dumps(key)
        if isinstance(value, str) and _can_be_body(value) and draw(st.booleans()):
            comma = draw(st.sampled_from(["", ","]))
            members.append(f"{shown_key}: ~~~\n{value}\n{HEREDOC_SENTINEL}\n{comma}")
        else:
            members.append(f"{shown_key}: {json.dumps(value)},")
    end = draw(st.sampled_from(["@@end\n", ""]))
    return f"@@call {name}\n{{\n" + "\n".join(members) + f"\n}}\n{end}"


@dataclass
class Reply:
    text: str
    prose: str
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    first_call_at: int | None = None


@st.composite
def line_replies(draw: Any, kit: SimpleNamespace, dialect: str) -> Reply:
    """Prose lines and calls on their own lines, with what the reader must make of them."""
    segments: list[tuple[str, list[tuple[str, dict[str, Any]]]]] = []
    for _ in range(draw(st.integers(min_value=1, max_value=5))):
        if draw(st.booleans()):
            calls = draw(calls_lists(kit.NAMES))
            if dialect == "heredoc":
                text = "".join(render_heredoc(n, a, draw) for n, a in calls).rstrip("\n")
            else:
                form = draw(st.sampled_from(kit.FORMS_FOR_SEVERAL))
                key = draw(st.sampled_from(["arguments", "parameters"]))
                text = kit.render(calls, form, key)
            segments.append((text, calls))
        else:
            segments.append((draw(prose_lines), []))
    text, prose = "", ""
    reply = Reply("", "")
    for index, (segment, calls) in enumerate(segments):
        sep = "\n" if index < len(segments) - 1 else ""
        if calls:
            if reply.first_call_at is None:
                reply.first_call_at = len(text)
            reply.calls.extend(calls)
        else:
            prose += segment + sep
        text += segment + sep
    reply.text, reply.prose = text, prose
    return reply


@st.composite
def splits(draw: Any, text: str) -> list[str]:
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=len(text) // 3 + 2))))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


TOKENS = [
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    ":",
    ",",
    " ",
    "\n",
    "\t",
    "\\",
    "`",
    "```",
    "```json\n",
    "<tool_call>",
    "</tool_call>",
    "<",
    "@",
    "@@call ",
    "@@end",
    "~~~",
    HEREDOC_SENTINEL,
    '"name"',
    '"arguments"',
    '"parameters"',
    "get_weather",
    "search",
    "nope",
    "true",
    "None",
    "1",
    "-2.5e3",
    "x",
    "é",
    "\u2028",
    "\r",
    "\x00",
    "json~~~",
    "txt~~~\n",
    "{}",
    '{"name": "search", "arguments": {}}',
    "@@call search\n{q: 1}\n",
]
soup = st.lists(st.sampled_from(TOKENS), max_size=40).map("".join)


# ------------------------------------------------------------------------ properties


@SETTINGS
@given(
    data=st.data(),
    text=st.text().filter(lambda s: not any(c in s for c in "{[`") and "<tool_call>" not in s),
    final=st.booleans(),
)
def test_text_without_brace_bracket_fence_or_tag_comes_back_unchanged(
    kit: SimpleNamespace, data: st.DataObject, text: str, final: bool
) -> None:
    mode = data.draw(st.sampled_from(kit.MODES))
    result = kit.parse(text, mode=mode, final=final)
    assert result.text == text
    assert result.calls == []
    if final:
        assert result.problems == [] or mode == "heredoc"


@SETTINGS
@given(
    data=st.data(),
    key=st.sampled_from(["arguments", "parameters"]),
    mode=st.sampled_from(["whole", "lines"]),
)
def test_any_call_in_any_accepted_form_reads_back_exactly(
    kit: SimpleNamespace, data: st.DataObject, key: str, mode: str
) -> None:
    calls = data.draw(calls_lists(kit.NAMES))
    form = data.draw(st.sampled_from(kit.FORMS_FOR_SEVERAL))
    result = kit.parse(kit.render(calls, form, key), mode=mode)
    assert kit.names_and_inputs(result.calls) == calls
    assert result.text == ""
    assert len({block.id for block in result.calls}) == len(calls)


@SETTINGS
@given(data=st.data())
def test_any_call_in_the_heredoc_dialect_reads_back_exactly(
    kit: SimpleNamespace, data: st.DataObject
) -> None:
    calls = data.draw(calls_lists(kit.NAMES))
    reply = "".join(render_heredoc(name, args, data.draw) for name, args in calls)
    result = kit.parse(reply, mode="heredoc")
    assert result.problems == []
    assert kit.names_and_inputs(result.calls) == calls


def check_stream(kit: SimpleNamespace, reply: Reply, deltas: list[str], mode: str) -> None:
    streamed = kit.stream(deltas, mode)
    shown = streamed.shown_text
    assert reply.text.startswith(shown)
    if reply.first_call_at is not None:
        # No character of a call was ever released for display.
        assert len(shown) <= reply.first_call_at
    assert shown + streamed.rest == streamed.prose == reply.prose
    assert kit.names_and_inputs(streamed.calls) == reply.calls


@SETTINGS
@given(data=st.data())
def test_lines_mode_streaming_never_shows_a_call(kit: SimpleNamespace, data: st.DataObject) -> None:
    reply = data.draw(line_replies(kit, "json"))
    check_stream(kit, reply, data.draw(splits(reply.text)), "lines")


@SETTINGS
@given(data=st.data())
def test_heredoc_streaming_never_shows_a_call(kit: SimpleNamespace, data: st.DataObject) -> None:
    reply = data.draw(line_replies(kit, "heredoc"))
    check_stream(kit, reply, data.draw(splits(reply.text)), "heredoc")


@SETTINGS
@given(data=st.data(), prose=st.none() | prose_lines)
def test_whole_mode_streaming_never_shows_a_call(
    kit: SimpleNamespace, data: st.DataObject, prose: str | None
) -> None:
    calls = data.draw(calls_lists(kit.NAMES))
    form = data.draw(st.sampled_from(kit.FORMS_FOR_SEVERAL))
    text = kit.render(calls, form, "arguments")
    if prose is None:
        reply = Reply(text, "", calls, 0)
    else:
        # Any prose at all makes the whole reply text.
        assume(prose.strip())
        text = data.draw(st.sampled_from([f"{prose}\n{text}", f"{text}\n{prose}"]))
        reply = Reply(text, text)
    check_stream(kit, reply, data.draw(splits(text)), "whole")


@SETTINGS
@given(data=st.data(), text=soup)
def test_no_input_raises_and_streaming_agrees_with_reading_at_once(
    kit: SimpleNamespace, data: st.DataObject, text: str
) -> None:
    mode = data.draw(st.sampled_from(kit.MODES))
    tools = kit.TOOLS
    # The reader itself raises nothing at all for any text...
    once = read_text_calls(text, tools, mode, True, None)
    assert once is not None
    peek = read_text_calls(text, tools, mode, False, None)
    assert peek is not None and peek.text == text
    assert peek.hold_from is None or 0 <= peek.hold_from <= len(text)
    if not once.calls:
        assert once.text == text
    # ...and streamed in any split through HeldText it ends where reading at once does.
    held = HeldText(_Relay(), tools, mode)
    shown = "".join(held.feed(delta) for delta in data.draw(splits(text)))
    rest, prose, calls = held.finish()
    assert prose == once.text
    assert kit.names_and_inputs(calls) == kit.names_and_inputs(once.calls)
    if mode != "off":
        assert shown + rest == prose


@SETTINGS
@given(
    data=st.data(),
    text=st.one_of(soup, st.text()),
    tools=st.one_of(
        st.just([{"name": "search"}]),
        st.lists(
            st.one_of(st.integers(), st.text(), st.dictionaries(st.text(), st.text())), max_size=2
        ),
        st.text(),
        st.none(),
    ),
    final=st.booleans(),
    state=st.one_of(st.none(), st.just({}), st.lists(st.integers(), max_size=1)),
)
def test_hook_raises_only_typed_modelplug_errors(
    kit: SimpleNamespace, data: st.DataObject, text: str, tools: Any, final: bool, state: Any
) -> None:
    mode = data.draw(st.one_of(st.sampled_from(kit.MODES), st.text(max_size=5), st.none()))
    try:
        result = kit.parse(text, mode=mode, final=final, tools=tools, state=state)
    except ModelplugError:
        return
    assert result is None or result.text == text or final


class _Relay:
    """The plugin manager's hook relay, reduced to the one hook (no pluggy)."""

    def modelplug_parse_text_tool_calls(self, **kwargs: Any) -> Any:
        return read_text_calls(**kwargs)
