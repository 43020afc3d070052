"""Schema translation keeps meaning (core's OpenAI strict form, the gemini plugin's
subset): over generated schemas, the translated schema
accepts exactly the objects the original accepts (seen through undo_strict), and what a
target cannot express is refused, never dropped."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from modelplug import RequestError, undo_strict
from modelplug.testing import examples
from modelplug_kit import Untranslatable, inline_refs, openai_strict

gemini = pytest.importorskip("modelplug_gemini.schema")

SCALARS = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer", "minimum": 0},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "string", "enum": ["a", "b"]},
        {"type": ["string", "null"]},
    ]
)


def objects(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: Any) -> dict[str, Any]:
        props = draw(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), children, max_size=4))
        required = draw(st.lists(st.sampled_from(sorted(props) or ["a"]), unique=True))
        return {
            "type": "object",
            "properties": props,
            "required": [r for r in required if r in props],
            "additionalProperties": False,
        }

    return build()


SCHEMAS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(objects(inner), inner.map(lambda s: {"type": "array", "items": s})),
    max_leaves=6,
)
OBJECT_SCHEMAS = objects(SCHEMAS)


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values of the schema language above: scalars, nullable types, enums, objects
    (required and optional properties), arrays, anyOf."""
    if "anyOf" in schema:
        return st.one_of([from_schema(b) for b in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([from_schema({**schema, "type": k}) for k in kind])
    if kind == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {k: from_schema(v) for k, v in props.items() if k in required},
            optional={k: from_schema(v) for k, v in props.items() if k not in required},
        )
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {})), max_size=3)
    simple: dict[str, st.SearchStrategy[Any]] = {
        "string": st.text(max_size=5),
        "integer": st.integers(min_value=schema.get("minimum", -100), max_value=100),
        "number": st.floats(allow_nan=False, allow_infinity=False, width=32),
        "boolean": st.booleans(),
        "null": st.none(),
    }
    return simple[kind]


def accepts(schema: dict[str, Any], value: Any) -> bool:
    return Draft202012Validator(schema).is_valid(value)


@settings(
    max_examples=examples(60),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data(), schema=OBJECT_SCHEMAS)
def test_openai_strict_accepts_what_the_original_accepts(data: Any, schema: dict[str, Any]) -> None:
    strict = openai_strict(schema)
    value = data.draw(from_schema(schema))

    # Every value of the original, with optional properties filled by null, fits strict.
    assert accepts(strict, _fill_nulls(value, schema))
    # Every strict answer, read back, fits the original.
    answer = data.draw(from_schema(strict))
    assert accepts(schema, undo_strict(answer, schema))


def _fill_nulls(value: Any, schema: dict[str, Any]) -> Any:
    if isinstance(value, dict) and "properties" in schema:
        return {
            name: _fill_nulls(value[name], sub) if name in value else None
            for name, sub in schema["properties"].items()
        }
    if isinstance(value, list) and "items" in schema:
        return [_fill_nulls(v, schema["items"]) for v in value]
    return value


@settings(
    max_examples=examples(60),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data(), schema=OBJECT_SCHEMAS)
def test_gemini_schema_accepts_what_the_original_accepts(data: Any, schema: dict[str, Any]) -> None:
    translated = gemini.to_gemini_schema("output", schema) or {"type": "object"}
    value = data.draw(from_schema(schema))
    assert accepts(_openapi_to_json_schema(translated), value)


def _openapi_to_json_schema(node: Any) -> Any:
    """Gemini's OpenAPI subset read back as JSON Schema (nullable as a null branch)."""
    if isinstance(node, list):
        return [_openapi_to_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _openapi_to_json_schema(v) for k, v in node.items() if k != "nullable"}
    if "properties" in out:
        out["properties"] = {k: _openapi_to_json_schema(v) for k, v in node["properties"].items()}
        out["additionalProperties"] = False
    if node.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out


def test_strict_mode_cannot_carry_pattern_properties() -> None:
    with pytest.raises(Untranslatable, match="patternProperties"):
        openai_strict({"type": "object", "patternProperties": {"^x": {"type": "string"}}})


def test_gemini_cannot_carry_pattern_properties_and_says_where() -> None:
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "object", "patternProperties": {"^x": {"type": "string"}}}},
    }
    with pytest.raises(RequestError, match="patternProperties"):
        gemini.to_gemini_schema("output", schema)


def test_refs_are_inlined_and_recursion_is_refused() -> None:
    schema = {
        "type": "object",
        "properties": {"home": {"$ref": "#/$defs/City"}},
        "$defs": {"City": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
    assert inline_refs(schema)["properties"]["home"]["properties"]["name"] == {"type": "string"}
    recursive = {
        "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}},
        "$ref": "#/$defs/N",
    }
    with pytest.raises(Untranslatable, match="recursive"):
        inline_refs(recursive)


def test_undo_strict_keeps_a_null_the_original_allowed() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": ["string", "null"]}, "b": {"type": "string"}},
    }
    assert undo_strict({"a": None, "b": None}, schema) == {"a": None}
