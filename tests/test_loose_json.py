"""Loose-JSON repair: syntax only, never closing what a truncation left open."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplug import parse_arguments, repair_loose_json

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
OBJECTS = st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4)


@pytest.mark.parametrize(
    ("text", "expected", "repair"),
    [
        ('{"a": 1,}', {"a": 1}, "trailing comma"),
        ('{"a": [1, 2,], }', {"a": [1, 2]}, "trailing comma"),
        ("{'a': 'it\\'s \"x\"'}", {"a": 'it\'s "x"'}, "single-quoted string"),
        ('{path: "a.txt", max_lines: 3}', {"path": "a.txt", "max_lines": 3}, "unquoted key"),
    ],
)
def test_repairs_syntax(text, expected, repair):
    value, repairs = repair_loose_json(text)
    assert value == expected and repair in repairs


@pytest.mark.parametrize("text", ['{"path": "a.t', '{"a": [1, 2', '{"a": 1', "[1, 2]", "{a b}"])
def test_never_closes_or_invents(text):
    assert repair_loose_json(text)[0] is None
    assert parse_arguments(text)[0] == text  # stays the raw string


def test_empty_arguments_are_an_empty_object():
    assert parse_arguments("  ") == ({}, [])


@given(OBJECTS)
def test_strict_json_objects_round_trip(obj):
    text = json.dumps(obj)
    assert parse_arguments(text)[0] == obj
    assert repair_loose_json(text)[0] == obj


@given(OBJECTS.filter(bool), st.data())
def test_a_truncated_object_is_never_completed(obj, data):
    text = json.dumps(obj)
    cut = data.draw(st.integers(1, len(text) - 1))
    prefix = text[:cut]
    value, _ = repair_loose_json(prefix)
    # No strict prefix of an object's JSON is an object: anything returned was invented.
    assert value is None
