"""Structured output on Claude: native output_config.format where the model has it, a
forced tool (core's tool mode) elsewhere, and a forced tool never sent with thinking."""

from __future__ import annotations

from modelplug import Settings, as_request
from modelplug.contract.types import OutputSchema, Route, ThinkingRequest, ToolSpec
from modelplug_anthropic.mapping import to_wire_params
from modelplug_anthropic.routes import resolve

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def route(model: str) -> Route:
    found = resolve(f"anthropic/{model}", Settings([]), "anthropic")
    assert found is not None
    return found


def test_models_with_structured_outputs_are_native_and_older_ones_use_a_tool() -> None:
    # claude-sonnet-4-5 (end of life) on purpose: the first Sonnet with native
    # structured outputs, the lower bound of the plugin's pattern.
    assert route("claude-sonnet-4-5").info.structured_output == "native"
    assert route("claude-opus-4-6-20260101").info.structured_output == "native"
    assert route("claude-3-5-haiku-latest").info.structured_output == "tool"


def test_native_mode_puts_the_schema_in_output_config_beside_the_effort() -> None:
    request = as_request(
        "hi",
        output_schema=OutputSchema(json_schema=SCHEMA),
        thinking=ThinkingRequest(effort="low"),
    )
    params = to_wire_params(request, route("claude-opus-4-6"))

    assert params["output_config"] == {
        "effort": "low",
        "format": {"type": "json_schema", "schema": SCHEMA},
    }


def test_a_forced_tool_goes_without_thinking() -> None:
    request = as_request(
        "hi",
        tools=[ToolSpec(name="output", input_schema=SCHEMA)],
        tool_choice="output",
        thinking=ThinkingRequest(budget_tokens=2048),
    )
    params = to_wire_params(request, route("claude-3-7-sonnet-latest"))

    assert params["tool_choice"] == {"type": "tool", "name": "output"}
    assert "thinking" not in params
