"""Any body, however mangled, is read into a Parsed or refused with a ShapeError (a 400
in Anthropic's shape), never another exception: one bad request must not become a 500."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug.testing import examples
from modelplug_gateway.shapes.anthropic_messages import SHAPE
from modelplug_gateway.shapes.base import Parsed, ShapeError

VALID: dict[str, Any] = {
    "model": "anthropic/claude-sonnet-4-6",
    "max_tokens": 1024,
    "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
    "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Look it up.", "signature": "EqQBCgIY"},
                {"type": "redacted_thinking", "data": "EmwKAhgB"},
                {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"c": "P"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"},
                {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
                },
            ],
        },
    ],
    "tools": [{"name": "weather", "input_schema": {"type": "object"}}],
    "tool_choice": {"type": "auto"},
    "thinking": {"type": "enabled", "budget_tokens": 2048},
    "temperature": 0.3,
    "stop_sequences": ["END"],
    "metadata": {"user_id": "u"},
    "stream": True,
}

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += paths(item, (*prefix, index))
    return out


ALL_PATHS = paths(VALID)[1:]


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    body = copy.deepcopy(VALID)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(ALL_PATHS))
        parent: Any = body
        try:
            for step in path[:-1]:
                parent = parent[step]
            action = draw(st.sampled_from(["replace", "delete", "add"]))
            if action == "replace":
                parent[path[-1]] = draw(JSON)
            elif action == "delete":
                del parent[path[-1]]
            elif isinstance(parent, dict):
                parent[draw(st.text(max_size=6))] = draw(JSON)
            else:
                parent.append(draw(JSON))
        except (KeyError, IndexError, TypeError, AttributeError):
            # An earlier mutation removed or replaced this path (with a value that has
            # no items, or no append).
            continue
    return body


def test_the_unmutated_body_is_read() -> None:
    parsed = SHAPE.parse(copy.deepcopy(VALID))
    assert isinstance(parsed, Parsed) and len(parsed.request.messages) == 3


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_a_mutated_body_gives_a_parsed_or_a_400(body: Any) -> None:
    try:
        parsed = SHAPE.parse(body)
    except ShapeError as error:
        assert error.status == 400 and error.kind == "invalid_request_error"
        assert error.message
        assert SHAPE.error_body(error.status, error.kind, error.message)["type"] == "error"
    else:
        assert isinstance(parsed, Parsed) and parsed.request.max_tokens


@settings(max_examples=examples(100), deadline=None)
@given(JSON)
def test_any_json_value_as_a_body_gives_a_parsed_or_a_400(body: Any) -> None:
    try:
        SHAPE.parse(body)
    except ShapeError as error:
        assert error.status == 400
