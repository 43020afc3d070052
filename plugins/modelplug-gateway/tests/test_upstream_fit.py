"""Where a system message inside a Messages conversation goes for an upstream that is
not Anthropic's: into a user turn, marked, never before a tool result (both APIs want
the results right after the call they answer)."""

from __future__ import annotations

from typing import Any

from modelplug import Client
from modelplug_gateway.shapes.anthropic_messages import SHAPE
from modelplug_gateway.upstream_fit import fit_to_route, marked_system_text

ECHO = Client(entry_points=False, environ={}, user_config="/nonexistent.toml").resolve("echo/echo")
CALL = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
RESULT = {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}
TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def folded(messages: list[dict[str, Any]]) -> list[list[Any]]:
    parsed = SHAPE.parse({"model": "echo", "max_tokens": 10, "messages": messages, "tools": TOOLS})
    request, dropped = fit_to_route(parsed, ECHO)
    assert dropped == ()
    return [[getattr(b, "text", None) for b in m.content] for m in request.messages]


def test_the_text_goes_after_the_tool_results_of_the_next_user_turn() -> None:
    assert folded(
        [
            {"role": "user", "content": "list"},
            {"role": "assistant", "content": [CALL]},
            {"role": "system", "content": "note"},
            {"role": "user", "content": [RESULT, {"type": "text", "text": "go on"}]},
        ]
    ) == [["list"], [None], ["a.txt", marked_system_text("note"), "go on"]]


def test_with_no_user_turn_after_it_ends_the_last_one_before() -> None:
    assert folded(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "system", "content": [{"type": "text", "text": "one"}]},
            {"role": "system", "content": "two"},
        ]
    ) == [["hi", marked_system_text("one"), marked_system_text("two")], ["hello"]]


def test_with_no_user_turn_at_all_it_is_one() -> None:
    assert folded([{"role": "system", "content": "only"}]) == [[marked_system_text("only")]]


def test_a_request_without_extras_is_sent_as_it_is() -> None:
    parsed = SHAPE.parse(
        {"model": "echo", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]}
    )
    assert fit_to_route(parsed, ECHO) == (parsed.request, ())
    assert fit_to_route(parsed, ECHO)[0] is parsed.request
