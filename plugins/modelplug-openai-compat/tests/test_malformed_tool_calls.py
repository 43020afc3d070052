"""Tool-call entries that are not valid calls end in a notice, never in an exception
and never in a tool_use block without a name."""

from __future__ import annotations

from pathlib import Path

from modelplug.contract.types import Notice, ToolSpec

RECORDINGS = Path(__file__).parent / "recordings"


def test_malformed_entries_are_noticed_and_the_good_call_kept(compat, wire_server):
    wire_server.add_file(RECORDINGS / "malformed_tool_calls.sse")
    events = list(compat().stream("wire/m", "go", tools=[ToolSpec(name="ls")]))
    response = events[-1].response
    assert [(c.id, c.name, c.input) for c in response.tool_calls] == [
        ("call_d", "ls", {"dir": "/"})
    ]
    assert all(c.name for c in response.tool_calls)
    problems = response.metadata["malformed_tool_calls"]
    assert [p.split(":")[0] for p in problems] == [
        "a tool call whose function is not an object",
        "a tool call whose name is not a string",
        "a tool-call entry that is not an object",
    ]
    [notice] = [e for e in events if isinstance(e, Notice)]
    assert notice.kind == "malformed_tool_call" and "3 tool-call fragment(s)" in notice.message
    assert response.stop_reason == "tool_use"


def test_a_call_that_never_gets_a_name_is_no_call(compat, wire_server):
    wire_server.add_sse(
        [
            {
                "choices": [
                    {"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}}
                ]
            },
            {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]},
        ],
        done=True,
    )
    response = compat().complete("wire/m", "go", tools=[ToolSpec(name="ls")])
    assert response.tool_calls == []
    assert response.stop_reason == "other"
    assert response.metadata["malformed_tool_calls"] == [
        "a tool call with no name (arguments '{}')"
    ]
