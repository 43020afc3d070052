"""Tool schemas into Gemini's parameters subset, and a RequestError for what it cannot
express."""

from __future__ import annotations

from typing import Any

import pytest
from modelplug import RequestError
from modelplug_gemini.schema import to_gemini_schema


def test_refs_nullable_const_and_dropped_keys() -> None:
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": False,
        "$defs": {"Unit": {"type": "string", "enum": ["c", "f"], "description": "unit"}},
        "properties": {
            "city": {"type": "string", "format": "email", "minLength": 1},
            "unit": {"$ref": "#/$defs/Unit"},
            "days": {"type": ["integer", "null"], "format": "int32", "exclusiveMinimum": 0},
            "mode": {"const": "fast"},
            "tags": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
            "when": {"oneOf": [{"type": "string", "format": "date-time"}, {"type": "integer"}]},
        },
        "required": ["city"],
    }
    assert to_gemini_schema("t", schema) == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1},
            "unit": {"type": "string", "enum": ["c", "f"], "description": "unit"},
            "days": {"type": "integer", "nullable": True, "format": "int32"},
            "mode": {"enum": ["fast"], "type": "string"},
            "tags": {"type": "array", "items": {"nullable": True, "type": "string"}},
            "when": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "integer"}]},
        },
        "required": ["city"],
    }


def test_a_tool_without_parameters_declares_none() -> None:
    assert to_gemini_schema("t", {"type": "object", "properties": {}}) is None


@pytest.mark.parametrize(
    ("schema", "what"),
    [
        ({"type": "object", "additionalProperties": {"type": "string"}}, "map type"),
        ({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}}}, "allOf"),
        ({"type": "object", "properties": {"n": {"$ref": "#/properties/n"}}}, "recursive"),
        ({"type": "object", "properties": {"level": {"enum": [1, 2, 3]}}}, "non-string enum"),
        (
            {"type": "object", "properties": {"v": {"type": ["string", "integer"]}}},
            "union of types",
        ),
        (
            {"type": "object", "properties": {"v": {"$ref": "https://example.com/s.json"}}},
            "non-local",
        ),
    ],
)
def test_what_the_subset_cannot_say_is_a_request_error(schema: dict[str, Any], what: str) -> None:
    with pytest.raises(RequestError, match=what) as caught:
        to_gemini_schema("lookup", schema)
    assert "'lookup'" in str(caught.value)
