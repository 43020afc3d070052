"""The simplest value that fits a JSON Schema: how the echo model and the test kit's
FakeModel answer a structured request, so code can be tested without a model.

It takes, in order, a schema's ``const``, first ``enum`` value, ``default`` and first
``examples`` entry; else the smallest value of its type (the minimum, ``minItems``
items, every required property). ``$ref`` to ``$defs`` (what pydantic writes) and the
first branch of ``anyOf``/``oneOf`` are followed.
"""

from __future__ import annotations

from typing import Any

__all__ = ["example_for"]

_FORMATS = {
    "date": "2026-01-01",
    "date-time": "2026-01-01T00:00:00Z",
    "time": "00:00:00",
    "email": "someone@example.com",
    "uri": "https://example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
}


def example_for(schema: dict[str, Any], text: str = "", _root: dict[str, Any] | None = None) -> Any:
    """A value that fits ``schema``; strings are ``text`` (cut to fit) where free."""
    root = schema if _root is None else _root
    if "$ref" in schema:
        return example_for(_resolve(schema["$ref"], root), text, root)
    for key in ("const",):
        if key in schema:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    if schema.get("examples"):
        return schema["examples"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return example_for(schema[key][0], text, root)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        properties = schema.get("properties", {})
        required = schema.get("required", list(properties))
        return {name: example_for(properties.get(name, {}), text, root) for name in required}
    if kind == "array":
        item = schema.get("items", {})
        return [example_for(item, text, root) for _ in range(schema.get("minItems", 0))]
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        value = low + 1 if "exclusiveMinimum" in schema else low
        return int(value) if kind == "integer" else float(value)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if schema.get("format") in _FORMATS:
        return _FORMATS[schema["format"]]
    low, high = schema.get("minLength", 0), schema.get("maxLength")
    value = text if high is None else text[:high]
    return value + "x" * max(0, low - len(value))


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    node: Any = root
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return dict(node)
