"""JSON Schemas translated to what each provider's structured output accepts.

Every translation keeps the schema's meaning: the objects the translated schema accepts
are exactly the original's, seen through :func:`undo_strict` where a property had to
become required-but-nullable. What a provider cannot express is never dropped quietly:
the translator raises :class:`Untranslatable`, and the caller falls back to a mode that
can (documented per plugin) or refuses the request with a RequestError.

- :func:`openai_strict`: OpenAI's strict mode (Chat Completions ``response_format`` and
  the Responses API's ``text.format``) wants ``additionalProperties: false`` on every
  object and every property required: an optional property becomes required and
  nullable, and :func:`undo_strict` takes the ``null`` back out of the answer.
- :func:`inline_refs`: ``$ref`` to ``#/$defs/...`` replaced by the definition, for APIs
  without references; a recursive schema is untranslatable.

A subset only one API has (Gemini's OpenAPI-style ``Schema``) lives in that provider's
plugin.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["Untranslatable", "inline_refs", "openai_json_schema", "openai_strict"]

# Keywords whose meaning OpenAI's strict mode cannot carry.
_NOT_STRICT = frozenset(
    {
        "patternProperties",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
        "propertyNames",
        "not",
        "minProperties",
        "maxProperties",
    }
)


class Untranslatable(ValueError):
    """The schema holds something the target cannot express; ``keyword`` and ``path``
    say what and where."""

    def __init__(self, keyword: str, path: str, target: str) -> None:
        self.keyword = keyword
        self.path = path or "(top)"
        super().__init__(f"{target} cannot express {keyword!r} at {self.path}")


def inline_refs(schema: dict[str, Any], target: str = "this provider") -> dict[str, Any]:
    """The schema with every local ``$ref`` replaced by its definition."""
    definitions = {**schema.get("definitions", {}), **schema.get("$defs", {})}

    def walk(node: Any, path: str, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(item, f"{path}/{i}", seen) for i, item in enumerate(node)]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            if not ref.startswith(("#/$defs/", "#/definitions/")) or name not in definitions:
                raise Untranslatable("$ref", path, target)
            if name in seen:
                raise Untranslatable("$ref (recursive)", path, target)
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return walk({**definitions[name], **rest}, path, (*seen, name))
        return {
            k: walk(v, f"{path}/{k}", seen)
            for k, v in node.items()
            if k not in ("$defs", "definitions")
        }

    result: dict[str, Any] = walk(schema, "", ())
    return result


def _allows_null(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(isinstance(b, dict) and _allows_null(b) for b in node.get("anyOf", []))


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    if _allows_null(node):
        return node
    return {"anyOf": [node, {"type": "null"}]}


def openai_strict(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema in OpenAI's strict form. Raises Untranslatable for what strict mode
    cannot carry (the caller then sends the original with ``strict: false``)."""

    def walk(node: Any, path: str) -> Any:
        if not isinstance(node, dict):
            return node
        for keyword in node:
            if keyword in _NOT_STRICT:
                raise Untranslatable(keyword, path, "OpenAI's strict mode")
        out = {k: v for k, v in node.items()}
        for key in ("anyOf", "allOf", "oneOf", "prefixItems"):
            if key in out:
                out[key] = [walk(b, f"{path}/{key}/{i}") for i, b in enumerate(out[key])]
        if "oneOf" in out:
            # Strict mode has no oneOf; anyOf differs only when branches overlap.
            raise Untranslatable("oneOf", path, "OpenAI's strict mode")
        if isinstance(out.get("items"), dict):
            out["items"] = walk(out["items"], f"{path}/items")
        for key in ("$defs", "definitions"):
            if key in out:
                out[key] = {n: walk(d, f"{path}/{key}/{n}") for n, d in out[key].items()}
        is_object = out.get("type") == "object" or "properties" in out
        if is_object:
            extra = out.get("additionalProperties", True)
            if extra not in (False, True) or (extra is True and "additionalProperties" in node):
                raise Untranslatable("additionalProperties", path, "OpenAI's strict mode")
            properties = {
                name: walk(sub, f"{path}/properties/{name}")
                for name, sub in out.get("properties", {}).items()
            }
            required = set(out.get("required", []))
            out["properties"] = {
                name: sub if name in required else _nullable(sub)
                for name, sub in properties.items()
            }
            out["required"] = list(properties)
            out["additionalProperties"] = False
        return out

    result: dict[str, Any] = walk(copy.deepcopy(schema), "")
    return result


def openai_json_schema(name: str, schema: dict[str, Any], strict: bool = True) -> dict[str, Any]:
    """``{"name", "schema", "strict"}`` as OpenAI's APIs take a JSON schema (Chat
    Completions' ``response_format.json_schema``, the Responses API's ``text.format``).

    Strict mode when asked and the schema can be put in strict form; else the schema
    unchanged with ``strict: false`` (the model is guided, not constrained, and core's
    validation still holds the answer to the schema): a documented fallback, never a
    schema that means something else.
    """
    if strict:
        try:
            return {"name": name, "schema": openai_strict(schema), "strict": True}
        except Untranslatable:
            pass
    return {"name": name, "schema": schema, "strict": False}
