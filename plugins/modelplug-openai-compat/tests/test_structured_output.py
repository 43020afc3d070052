"""Structured output on Chat Completions servers: each server kind gets the schema the
way it takes it."""

from __future__ import annotations

from modelplug import as_request
from modelplug.contract.types import Endpoint, OutputSchema, Route
from modelplug_openai_compat.request import build_body

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "note": {"type": "string"}},
    "required": ["name"],
}


def body_for(server: str, schema: dict = SCHEMA) -> dict:  # type: ignore[type-arg]
    route = Route(
        provider="lab",
        model="m",
        endpoint=Endpoint(
            type="openai-compatible", base_url="http://127.0.0.1:1/v1", server=server
        ),
    )
    request = as_request("hi", output_schema=OutputSchema(name="City", json_schema=schema))
    return build_body(request, route)


def test_openai_style_servers_get_response_format_in_strict_form() -> None:
    shaped = body_for("vllm")["response_format"]
    assert shaped["type"] == "json_schema"
    inner = shaped["json_schema"]
    assert (inner["name"], inner["strict"]) == ("City", True)
    assert inner["schema"]["required"] == ["name", "note"]  # every property, note nullable
    assert inner["schema"]["additionalProperties"] is False


def test_a_schema_without_a_strict_form_goes_unchanged_and_not_strict() -> None:
    loose = {"type": "object", "patternProperties": {"^x": {"type": "string"}}}
    inner = body_for("openrouter", loose)["response_format"]["json_schema"]
    assert inner == {"name": "City", "schema": loose, "strict": False}


def test_llamacpp_gets_its_own_json_schema_field() -> None:
    body = body_for("llamacpp")
    assert body["json_schema"] == SCHEMA
    assert "response_format" not in body
