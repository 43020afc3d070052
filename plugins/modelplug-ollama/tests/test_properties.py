"""Property tests of the stream reader: random splits of a recorded stream give the
same Response; mutated lines end in a Response or a classified ModelplugError."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from modelplug import ModelError, ModelplugError
from modelplug.contract.types import ToolSpec
from modelplug.testing import examples

RECORDINGS = [
    "text.jsonl",
    "thinking.jsonl",
    "tool_call.jsonl",
    "parallel_tools.jsonl",
    "images.jsonl",
    "length.jsonl",
]
TOOLS = [
    ToolSpec(name="get_weather"),
    ToolSpec(name="get_temperature"),
    ToolSpec(name="get_conditions"),
]
KINDS = {
    "transient",
    "rate_limit",
    "overloaded",
    "auth",
    "quota",
    "not_found",
    "context_overflow",
    "bad_request",
    "content_filter",
    "aborted",
    "unreachable",
    "other",
}
SLOW = settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c for c in cuts if 0 < c < len(data)})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def dump(response, recorded_ids: bytes):
    # The generated ids of calls Ollama sent without one differ from run to run.
    data = response.model_dump(exclude={"cost"})
    for block in data["message"]["content"]:
        if block["type"] == "tool_use" and block["id"].encode() not in recorded_ids:
            block["id"] = "generated"
    return data


@SLOW
@given(name=st.sampled_from(RECORDINGS), cuts=st.lists(st.integers(0, 3000), max_size=8))
def test_random_splits_give_the_same_response(ollama, wire, name, cuts):
    client = ollama()
    data = wire.recorded(name)
    wire.server.add(data, path="/api/chat")
    whole = client.complete("ollama/m", "hi", tools=TOOLS)
    wire.server.add(cut(data, cuts), path="/api/chat")
    split = client.complete("ollama/m", "hi", tools=TOOLS)
    assert dump(split, data) == dump(whole, data)


def mutate(line: str, how: int, where: int) -> str:
    if how == 0:
        return line[: where % (len(line) + 1)]  # cut
    if how == 1:
        i = where % max(len(line), 1)
        return line[:i] + "}" + line[i + 1 :]  # a brace where it does not belong
    obj = json.loads(line)
    victims: list[object] = [None, 1, "x", [], {}, True, [{}], [{"function": "f"}]]
    value = victims[where % len(victims)]
    if how == 2:
        obj["message"] = value
    elif how == 3 and isinstance(obj.get("message"), dict):
        key = ["content", "thinking", "tool_calls", "role"][where % 4]
        obj["message"][key] = value
    elif how == 4:
        obj["done"] = value
    elif how == 5:
        obj["done_reason"] = value
        obj["eval_count"] = value
    else:
        obj = value
    return json.dumps(obj)


@SLOW
@given(
    name=st.sampled_from(RECORDINGS),
    index=st.integers(0, 20),
    how=st.integers(0, 6),
    where=st.integers(0, 400),
)
def test_mutated_lines_end_in_a_response_or_a_classified_error(
    ollama, wire, name, index, how, where
):
    lines = wire.recorded(name).decode().splitlines()
    i = index % len(lines)
    lines[i] = mutate(lines[i], how, where)
    wire.server.add(("\n".join(lines) + "\n").encode(), path="/api/chat")
    try:
        response = ollama().complete("ollama/m", "hi", tools=TOOLS)
    except ModelError as error:
        assert error.error_class.kind in KINDS
    except ModelplugError:
        pass  # classified by its type (a RequestError, say)
    else:
        assert response.message.role == "assistant"
