"""A tool's JSON Schema in the form Gemini's ``parameters`` accepts (its OpenAPI 3.0
subset): local ``$ref``s inlined, ``type: [X, "null"]`` as ``nullable``, ``const`` as a
one-value ``enum``, ``oneOf`` as ``anyOf``, annotations the API rejects left out.

What the subset cannot say is a RequestError naming the tool and the place, before
anything is sent: a map type (``additionalProperties`` with a schema),
``patternProperties``, ``allOf``, ``not``, conditionals, a recursive ``$ref``, a non-string
``enum``, a union of several non-null types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from modelplug import RequestError

__all__ = ["to_gemini_schema"]

# Kept as they are: the keys Gemini's Schema message has.
_KEPT = frozenset(
    {
        "description",
        "title",
        "format",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "minProperties",
        "maxProperties",
        "default",
        "example",
        "propertyOrdering",
        "nullable",
    }
)
# Dropped: annotations, and checks the subset has no word for that only narrow what is
# valid (the tool still validates its own input).
_DROPPED = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "$defs",
        "definitions",
        "examples",
        "readOnly",
        "writeOnly",
        "deprecated",
        "uniqueItems",
        "multipleOf",
        "exclusiveMinimum",
        "exclusiveMaximum",
    }
)
_UNSUPPORTED = {
    "patternProperties": "pattern properties",
    "allOf": "allOf",
    "not": "not",
    "if": "if/then/else",
    "then": "if/then/else",
    "else": "if/then/else",
    "dependentSchemas": "dependentSchemas",
    "dependentRequired": "dependentRequired",
    "dependencies": "dependencies",
    "prefixItems": "tuple items",
    "unevaluatedProperties": "unevaluatedProperties",
    "contains": "contains",
}
_FORMATS = {"string": {"enum", "date-time"}, "integer": {"int32", "int64"}}
_FORMATS["number"] = {"float", "double"}
_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object"})


class _Translator:
    def __init__(self, tool: str, root: Mapping[str, Any]) -> None:
        self.tool = tool
        self.root = root
        self.active: list[str] = []  # the $refs being inlined, to catch recursion

    def fail(self, where: str, what: str) -> RequestError:
        return RequestError(
            f"the tool {self.tool!r} has a parameter schema Gemini cannot take: {what} at "
            f"{where or '/'}; simplify that part of the schema"
        )

    def resolve(self, ref: str, where: str) -> Mapping[str, Any]:
        if not ref.startswith("#/"):
            raise self.fail(where, f"a non-local $ref {ref!r}")
        node: Any = self.root
        for name in ref[2:].split("/"):
            name = name.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or name not in node:
                raise self.fail(where, f"the $ref {ref!r}, which points nowhere")
            node = node[name]
        if not isinstance(node, Mapping):
            raise self.fail(where, f"the $ref {ref!r}, which is not a schema")
        return node

    def convert(self, schema: Any, where: str) -> dict[str, Any]:
        if schema is True or schema == {}:
            return {}
        if not isinstance(schema, Mapping):
            raise self.fail(where, "a schema that is not an object")
        ref = schema.get("$ref")
        if isinstance(ref, str):
            if ref in self.active:
                raise self.fail(where, f"a recursive $ref {ref!r}")
            self.active.append(ref)
            try:
                target = dict(self.resolve(ref, where))
                # Siblings of $ref (a description, say) apply over the target's.
                target.update({k: v for k, v in schema.items() if k != "$ref"})
                return self.convert(target, where)
            finally:
                self.active.pop()
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key in _DROPPED or key == "$ref":
                continue
            if key in _UNSUPPORTED:
                raise self.fail(f"{where}/{key}", _UNSUPPORTED[key])
            if key == "type":
                self.type_of(value, out, f"{where}/type")
            elif key in ("anyOf", "oneOf"):
                self.union(value, out, f"{where}/{key}")
            elif key == "const":
                out["enum"] = [self.enum_value(value, f"{where}/const")]
                out.setdefault("type", "string")
            elif key == "enum":
                if not isinstance(value, list):
                    raise self.fail(f"{where}/enum", "an enum that is not a list")
                nullable = None in value
                out["enum"] = [self.enum_value(v, f"{where}/enum") for v in value if v is not None]
                if nullable:
                    out["nullable"] = True
            elif key == "properties":
                if not isinstance(value, Mapping):
                    raise self.fail(f"{where}/properties", "properties that are not an object")
                out["properties"] = {
                    str(name): self.convert(sub, f"{where}/properties/{name}")
                    for name, sub in value.items()
                }
            elif key == "required":
                if isinstance(value, list):
                    out["required"] = [str(v) for v in value]
            elif key == "items":
                out["items"] = self.convert(value, f"{where}/items")
            elif key == "additionalProperties":
                if value not in (False, True, {}):
                    raise self.fail(
                        f"{where}/additionalProperties", "a map type (additionalProperties)"
                    )
            elif key in _KEPT:
                out[key] = value
            # Any other key is an annotation Gemini does not know: left out.
        kind = out.get("type")
        fmt = out.get("format")
        if fmt is not None and (not isinstance(kind, str) or fmt not in _FORMATS.get(kind, ())):
            del out["format"]  # "email", "uri"...: hints the API refuses
        if "enum" in out:
            out["type"] = "string"
        return out

    def type_of(self, value: Any, out: dict[str, Any], where: str) -> None:
        kinds = value if isinstance(value, list) else [value]
        real = [k for k in kinds if k != "null"]
        if len(real) > 1:
            raise self.fail(where, f"a union of types {real!r}")
        if len(real) < len(kinds):
            out["nullable"] = True
        if real:
            if real[0] not in _TYPES:
                raise self.fail(where, f"the type {real[0]!r}")
            out["type"] = real[0]

    def union(self, value: Any, out: dict[str, Any], where: str) -> None:
        if not isinstance(value, list) or not value:
            raise self.fail(where, "a union that is not a list of schemas")
        options = [o for o in value if not (isinstance(o, Mapping) and o.get("type") == "null")]
        if len(options) < len(value):
            out["nullable"] = True
        converted = [self.convert(o, f"{where}/{i}") for i, o in enumerate(options)]
        if len(converted) == 1:
            out.update(converted[0])
        else:
            out["anyOf"] = converted

    def enum_value(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"a non-string enum value {value!r}")
        return value


def to_gemini_schema(tool: str, schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``parameters`` of a function declaration, or None for a tool that takes
    nothing (Gemini refuses an object schema with no properties)."""
    converted = _Translator(tool, schema).convert(schema, "")
    if converted.get("type", "object") == "object" and not converted.get("properties"):
        return None
    return converted
