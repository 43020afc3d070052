"""The heredoc dialect: ``@@call <name>`` plus one json-loose-heredoc object."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from modelplug.contract.errors import TextCallError
from modelplug_textcalls.errors import (
    HeredocSyntaxError,
    HeredocTruncatedError,
    is_truncation_error,
)
from modelplug_textcalls.heredoc import close_heredoc, heredoc_stop
from modelplug_textcalls.heredoc_json import (
    HEREDOC_SENTINEL,
    HEREDOC_TYPES,
    parse_loose_heredoc_json,
)

S = HEREDOC_SENTINEL
WRITE = (
    "@@call write_file\n"
    "{\n"
    '  path: "src/Hello.java",\n'
    "  overwrite: true,\n"
    "  content: java~~~\n"
    "public class Hello {\n"
    '    System.out.println("hi \\n");\n'
    "}\n"
    f"{S}\n"
    "}\n"
    "@@end\n"
)
WRITE_ARGS = {
    "path": "src/Hello.java",
    "overwrite": True,
    "content": 'public class Hello {\n    System.out.println("hi \\n");\n}',
    "content_type": "java",
}


def read(kit: SimpleNamespace, text: str) -> SimpleNamespace:
    result = kit.parse(text, mode="heredoc")
    return SimpleNamespace(
        text=result.text,
        calls=kit.names_and_inputs(result.calls),
        problems=result.problems,
    )


def test_a_call_with_a_raw_body_is_read(kit: SimpleNamespace) -> None:
    got = read(kit, WRITE)
    assert got.calls == [("write_file", WRITE_ARGS)]
    assert got.text == ""


def test_prose_before_and_after_stays_and_several_calls_are_read(kit: SimpleNamespace) -> None:
    second = "@@call get_weather\n{city: 'Oslo'}\n@@end\n"
    got = read(kit, f"I'll write it.\n{WRITE}Then check:\n{second}Done.")
    assert got.calls == [("write_file", WRITE_ARGS), ("get_weather", {"city": "Oslo"})]
    assert got.text == "I'll write it.\nThen check:\nDone."


def test_end_marker_may_be_missing_because_the_stop_sequence_ate_it(kit: SimpleNamespace) -> None:
    stopped = WRITE.removesuffix("@@end\n")
    assert read(kit, stopped).calls == [("write_file", WRITE_ARGS)]
    assert read(kit, stopped.rstrip("\n")).calls == [("write_file", WRITE_ARGS)]
    assert close_heredoc(stopped).endswith("}\n@@end\n")
    assert close_heredoc(WRITE) == WRITE
    assert heredoc_stop() == ["@@end"]


def test_end_marker_on_the_object_line_and_after_blank_lines(kit: SimpleNamespace) -> None:
    for tail in ("} @@end\n", "}\n\n  @@end\nBye"):
        got = read(kit, "@@call get_weather\n{city: 'Oslo'\n" + tail)
        assert got.calls == [("get_weather", {"city": "Oslo"})]
        assert got.text in ("", "Bye")


@pytest.mark.parametrize(
    ("loose", "strict"),
    [
        ('{path: "a", n: 3, f: -1.5e3, ok: True, no: False, none: None}', None),
        ("{'single': 'it\\'s \"quoted\"'}", {"single": 'it\'s "quoted"'}),
        ("{a: [1, 2, ], b: {c: null,},}", {"a": [1, 2], "b": {"c": None}}),
        ('{"quoted key": 1, plain_key: "v"}', {"quoted key": 1, "plain_key": "v"}),
        (f'{{a: ~~~\nraw \\ "x"\n\n{S}\n}}', {"a": 'raw \\ "x"\n'}),
        (f"{{a: ~~~\n{S}\n}}", {"a": ""}),
        (f"{{a: ~~~{S[3:]}\nold form\n{S}\n}}", {"a": "old form"}),
        (f'{{a: json~~~\n{{"k": [1, 2]}}\n{S}\n}}', {"a": {"k": [1, 2]}}),
        (f"{{a: md~~~\n# t\n{S}\n b: 1}}", {"a": "# t", "a_type": "md", "b": 1}),
        (f"{{a: [sh~~~\nls\n{S}\n]}}", {"a": ["ls"]}),
        (f"{{a: ~~~\nline\n{S}   \n}}", {"a": "line"}),
        (f"{{a: ~~~\n x{S}\n {S}\n{S}\n}}", {"a": f" x{S}\n {S}"}),
    ],
)
def test_json_loose_heredoc_rewrites_to_strict_json(loose: str, strict: object) -> None:
    rewritten = json.loads(parse_loose_heredoc_json(loose))
    if strict is None:
        strict = {"path": "a", "n": 3, "f": -1500.0, "ok": True, "no": False, "none": None}
    assert rewritten == strict


@pytest.mark.parametrize(
    ("loose", "fragment"),
    [
        ("{a: 1", "the object is never closed"),
        ("{a: [1, 2", "the object is never closed"),
        ('{a: "unterminated', "a string is never closed"),
        ("{a: 'unterminated", "a string is never closed"),
        ("{a: ~~~", "opener line never ends"),
        ("{a: txt~~~\nline one\nline two", "never ended by the line"),
        (f"{{a: ~~~\nline\n{S}x\n}}", "never ended by the line"),
        ("{a: ~~~\nline\n~~~\n}", "never ended by the line"),
    ],
)
def test_unclosed_object_string_or_body_is_truncation_never_closed_silently(
    loose: str, fragment: str
) -> None:
    with pytest.raises(HeredocTruncatedError, match=fragment) as caught:
        parse_loose_heredoc_json(loose)
    assert is_truncation_error(caught.value)
    assert isinstance(caught.value, TextCallError)
    # Closing the heredoc only adds the terminator: still truncated.
    with pytest.raises(HeredocTruncatedError):
        parse_loose_heredoc_json(close_heredoc(loose).removesuffix("@@end\n"))


@pytest.mark.parametrize(
    ("loose", "fragment"),
    [
        ("{a: foo}", "bare word 'foo'"),
        ("{a: 1}}", "text after the value"),
        ("{a: 1]", "unmatched"),
        ('{a: "x\ny"}', "raw line break"),
        ("{a: cobol~~~\nx\n}", "unknown body type 'cobol'"),
        ("{a: ~~~ trailing\nx\n}", "opener must end its line"),
        ("{~~~\nx\n" + S + "\n: 1}", "can only be a value"),
        (f"{{a: json~~~\nnot json\n{S}\n}}", "the json body of 'a' is not valid JSON"),
        ("{a: 1.}", "'1.' is not a number"),
        ("{a: =}", "unexpected character '='"),
        ("{a: ~x}", "unexpected '~'"),
        ("{a: 1 2}", "not valid JSON"),
        ("x", "no JSON object"),
        ("{" * 300 + "}" * 300, "nested deeper"),
    ],
)
def test_wrong_input_is_a_syntax_error_not_truncation(loose: str, fragment: str) -> None:
    with pytest.raises(HeredocSyntaxError, match=fragment) as caught:
        parse_loose_heredoc_json(loose)
    assert not is_truncation_error(caught.value)


def test_body_types_are_a_closed_set() -> None:
    assert {"go", "java", "js", "json", "md", "py", "sh", "sql", "txt", "xml", "yaml"} == set(
        HEREDOC_TYPES
    )


@pytest.mark.parametrize(
    ("cut", "fragment"),
    [
        ("@@call write_file", "no arguments follow"),
        ("@@call write_file\n", "no arguments follow"),
        ("@@call write_file\n{ path: 'a',", "the object is never closed"),
        ("@@call write_file\n{ path: 'a", "a string is never closed"),
        ("@@call write_file\n{ content: txt~~~\nhalf a fi", "never ended by the line"),
    ],
)
def test_a_cut_off_call_stays_text_and_is_reported_as_truncated(
    kit: SimpleNamespace, cut: str, fragment: str
) -> None:
    reply = "Writing it now.\n" + cut
    got = read(kit, reply)
    assert got.calls == []
    assert got.text == reply
    assert len(got.problems) == 1
    assert got.problems[0].startswith("truncated: @@call write_file")
    assert fragment in got.problems[0]


def test_a_call_inside_a_cut_off_body_never_runs(kit: SimpleNamespace) -> None:
    reply = (
        "@@call write_file\n{ content: sh~~~\n"
        "@@call search\n{q: 'x'}\n@@end\n"  # content of the unfinished body
    )
    got = read(kit, reply)
    assert got.calls == []
    assert got.problems[0].startswith("truncated:")


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        ("@@call rm_rf\n{}\n", "unknown tool"),
        ("@@call \n{}\n", "no tool name"),
        ("@@call search\n[1]\n", "must be a json-loose-heredoc object"),
        ("@@call search\n{q: bad}\n", "bare word 'bad'"),
        ("@@call search\n{q: 'x'} trailing\n", "text follows the arguments"),
    ],
)
def test_a_wrong_call_makes_every_call_of_the_reply_text(
    kit: SimpleNamespace, reply: str, fragment: str
) -> None:
    good = "@@call get_weather\n{city: 'Oslo'}\n@@end\n"
    whole = good + reply + good
    got = read(kit, whole)
    assert got.calls == []
    assert got.text == whole
    assert any(fragment in p and not p.startswith("truncated") for p in got.problems)


def test_call_prefix_only_counts_at_the_start_of_a_line(kit: SimpleNamespace) -> None:
    reply = "Write @@call get_weather\n{city: 'Oslo'}\n"
    assert read(kit, reply).calls == []
    indented = "  @@call get_weather\n  {city: 'Oslo'}\n"
    assert read(kit, indented).calls == [("get_weather", {"city": "Oslo"})]


def test_streaming_a_heredoc_call_never_shows_it(kit: SimpleNamespace) -> None:
    reply = f"Writing.\n{WRITE}Done."
    streamed = kit.stream(list(reply), "heredoc")
    assert streamed.shown_text == "Writing.\n"
    assert streamed.rest == "Done."
    assert kit.names_and_inputs(streamed.calls) == [("write_file", WRITE_ARGS)]


def test_streaming_a_truncated_call_releases_it_at_the_end(kit: SimpleNamespace) -> None:
    reply = "Writing.\n@@call write_file\n{ content: txt~~~\nhalf"
    streamed = kit.stream(list(reply), "heredoc")
    assert streamed.shown_text == "Writing.\n"
    assert streamed.rest == reply[len("Writing.\n") :]
    assert streamed.calls == []
