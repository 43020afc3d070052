"""Any Responses body, however mangled, is read into a Parsed or refused with a
ShapeError (a 400 in the Responses error shape), never another exception: one bad
request must not become a 500. Then the same through the running gateway, where what
the shape read also goes through the upstream fitting and the replay marking."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug import ThinkingBlock
from modelplug.testing import FakeModel, examples, reply
from modelplug_gateway.shapes.base import Parsed, ShapeError
from modelplug_gateway.shapes.reasoning_items import reasoning_item
from modelplug_gateway.shapes.responses import SHAPE

SEALED = reasoning_item(
    ThinkingBlock(text="Plan.", signature="sig", wire={"type": "thinking", "signature": "sig"}),
    "fake/m",
    encrypted=True,
)
VALID: dict[str, Any] = {
    "model": "fake/m",
    "instructions": "Be brief.",
    "input": [
        {"type": "message", "role": "developer", "content": "Rules."},
        {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
        SEALED,
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": '{"c":"P"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "18C"},
        {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": "x"},
        {"type": "function_call_output", "call_id": "c9", "output": [{"type": "input_text", "text": "?"}]},
        {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "Later."}]},
        {
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Sunny.", "annotations": []}],
        },
        {
            "role": "user",
            "content": [
                {"type": "input_image", "image_url": "https://x.test/a.png"},
                {"type": "input_image", "image_url": "data:image/png;base64,iVBO"},
            ],
        },
    ],
    "tools": [
        {"type": "function", "name": "weather", "parameters": {"type": "object"}},
        {"type": "web_search", "filters": {"allowed_domains": ["x.test"]}},
        {"type": "namespace", "name": "ns", "tools": []},
    ],
    "tool_choice": "auto",
    "reasoning": {"effort": "medium", "summary": "auto"},
    "text": {"format": {"type": "json_schema", "name": "w", "schema": {"type": "object"}}},
    "include": ["reasoning.encrypted_content"],
    "max_output_tokens": 256,
    "temperature": 0.3,
    "top_p": 0.9,
    "store": False,
    "stream": False,
    "parallel_tool_calls": True,
    "prompt_cache_key": "k",
}  # fmt: skip

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
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
            continue  # an earlier mutation removed or replaced this path
    return body


def test_the_unmutated_body_is_read() -> None:
    parsed = SHAPE.parse(copy.deepcopy(VALID))
    assert isinstance(parsed, Parsed)
    roles = [m.role for m in parsed.request.messages]
    # The two reasoning items and the call are one turn; the call's output and the one
    # answering no call (as text) the next; the system message a note before the reply.
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    assert [type(b).__name__ for b in parsed.request.messages[1].content] == [
        "ThinkingBlock",
        "ThinkingBlock",
        "ToolUseBlock",
    ]
    assert parsed.request.system == "Be brief.\n\nRules."
    assert parsed.system_notes == ((3, "Later."),)
    assert parsed.unserved == ("input.custom_tool_call", "tools.namespace")
    assert set(parsed.passthrough) >= {"input", "tools", "prompt_cache_key"}


def _check_refusal(error: ShapeError) -> None:
    assert error.status == 400 and error.kind == "invalid_request_error"
    assert error.message
    body = SHAPE.error_body(error.status, error.kind, error.message)
    assert set(body["error"]) == {"message", "type", "param", "code"}


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_a_mutated_body_gives_a_parsed_or_a_400(body: Any) -> None:
    try:
        parsed = SHAPE.parse(body)
    except ShapeError as error:
        _check_refusal(error)
    else:
        assert isinstance(parsed, Parsed) and parsed.request.messages


@settings(max_examples=examples(100), deadline=None)
@given(JSON)
def test_any_json_value_as_a_body_gives_a_parsed_or_a_400(body: Any) -> None:
    try:
        SHAPE.parse(body)
    except ShapeError as error:
        _check_refusal(error)


@pytest.fixture(scope="module")
def gateway_url(serving: Any) -> Iterator[str]:
    from modelplug import Client
    from modelplug_gateway.app import Gateway
    from modelplug_gateway.auth import OpenGate
    from modelplug_gateway.settings import GatewaySettings

    client = Client(
        plugins=[FakeModel([reply("{}")] * 10_000)],  # JSON: the body asks for it
        user_config="/nonexistent/modelplug.toml",
        project_dir="/",
        environ={},
        entry_points=False,
    )
    with serving(Gateway(client, GatewaySettings(), OpenGate())) as url:
        yield url


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(mutated())
def test_a_mutated_body_through_the_gateway_is_answered_or_a_responses_400(
    gateway_url: str, body: Any
) -> None:
    """Through the app (fitting, replay marking, the answer): 200 or a 400 in the
    Responses error shape, never a 500 (a 502 only for an answer that does not fit a
    schema the mutation made)."""
    answer = httpx2.post(gateway_url + "/v1/responses", json=body)
    if answer.status_code == 200:
        assert answer.json()["object"] == "response"
        return
    error = answer.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    if answer.status_code == 502:
        assert error["code"] == "output_validation_failed"
    else:
        assert (answer.status_code, error["type"]) == (400, "invalid_request_error"), answer.text
