"""Shared helpers, handed to tests through the ``kit`` fixture (test modules cannot
import this file): the request's tools and the modes, the hook through a Client with
the plugin, HeldText streaming, and calls rendered in every accepted form."""

from __future__ import annotations

import json
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import modelplug_textcalls
import pytest
from modelplug.client.client import Client
from modelplug.contract.types import ParsedText, ToolSpec, ToolUseBlock
from modelplug.testing import calm_hypothesis

TOOLS = [
    ToolSpec(
        name="get_weather",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
    ),
    ToolSpec(name="write_file"),
    ToolSpec(name="search"),
]
NAMES = [tool.name for tool in TOOLS]
MODES = ("whole", "lines", "off", "heredoc")
FORMS = ("alone", "per-line", "spread", "array", "array-spread", "fence", "fences", "tag")
FORMS_FOR_SEVERAL = tuple(form for form in FORMS if form != "alone")  # "alone" is one call

Call = tuple[str, dict[str, Any]]


def call_json(
    name: str, args: dict[str, Any], key: str = "arguments", indent: int | None = None
) -> str:
    return json.dumps({"name": name, key: args}, indent=indent)


def render(calls: list[Call], form: str, key: str = "arguments") -> str:
    """The calls written as text in one accepted form (all of it calls, nothing else)."""
    objects = [{"name": name, key: args} for name, args in calls]
    if form == "alone":
        assert len(calls) == 1
        return json.dumps(objects[0])
    if form == "per-line":
        return "\n".join(json.dumps(obj) for obj in objects)
    if form == "spread":
        return "\n".join(json.dumps(obj, indent=2) for obj in objects)
    if form == "array":
        return json.dumps(objects)
    if form == "array-spread":
        return json.dumps(objects, indent=2)
    if form == "fence":
        return "```json\n" + json.dumps(objects if len(objects) > 1 else objects[0]) + "\n```"
    if form == "fences":
        return "\n".join("```json\n" + json.dumps(obj, indent=2) + "\n```" for obj in objects)
    if form == "tag":
        return "\n".join("<tool_call>\n" + json.dumps(obj) + "\n</tool_call>" for obj in objects)
    raise AssertionError(form)


def names_and_inputs(calls: list[ToolUseBlock]) -> list[tuple[str, Any]]:
    return [(call.name, call.input) for call in calls]


@dataclass
class Streamed:
    shown: list[str]
    rest: str
    prose: str
    calls: list[Any]

    @property
    def shown_text(self) -> str:
        return "".join(self.shown)


@pytest.fixture(params=FORMS)
def form(request: pytest.FixtureRequest) -> str:
    """Each accepted form in turn: a test that takes it runs once per form."""
    chosen: str = request.param
    return chosen


@pytest.fixture
def client(make_client: Callable[..., Client]) -> Client:
    """A Client whose only text-call reader is this plugin."""
    return make_client(modelplug_textcalls)


def parse_with(client: Client) -> Callable[..., ParsedText | None]:
    def parse(
        text: str,
        mode: str = "whole",
        final: bool = True,
        tools: list[ToolSpec] | None = None,
        state: dict[str, Any] | None = None,
    ) -> ParsedText | None:
        result: ParsedText | None = client.hook.modelplug_parse_text_tool_calls(
            text=text,
            tools=TOOLS if tools is None else tools,
            mode=mode,
            final=final,
            state=state,
        )
        return result

    return parse


@pytest.fixture
def parse(client: Client) -> Callable[..., ParsedText | None]:
    """Call the hook through the client's plugin manager."""
    return parse_with(client)


def stream(
    client: Client, deltas: list[str], mode: str, tools: list[ToolSpec] | None = None
) -> Streamed:
    """Feed deltas through core's HeldText, as an adapter does."""
    held = client.held_text(TOOLS if tools is None else tools, mode)
    shown = [held.feed(delta) for delta in deltas]
    rest, prose, calls = held.finish()
    return Streamed(shown, rest, prose, calls)


@pytest.fixture
def kit(client: Client) -> types.SimpleNamespace:
    """Everything above, bound to this test's client."""
    return types.SimpleNamespace(
        TOOLS=TOOLS,
        NAMES=NAMES,
        MODES=MODES,
        FORMS=FORMS,
        FORMS_FOR_SEVERAL=FORMS_FOR_SEVERAL,
        client=client,
        parse=parse_with(client),
        stream=lambda deltas, mode, tools=None: stream(client, deltas, mode, tools),
        render=render,
        call_json=call_json,
        names_and_inputs=names_and_inputs,
    )


# No timing checks in property tests: a busy machine must not fail them by chance.
calm_hypothesis()
