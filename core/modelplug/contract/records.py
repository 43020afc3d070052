"""Plain dataclass records filled from TOML tables and checked by hand.

Reading settings and resolving a route happen on every start, so the records they use
(routes, settings sections, error classes) are stdlib dataclasses rather than pydantic
models: pydantic's import and first model build would cost more than the rest of
startup together. This module checks a table against a record's annotations, with
errors that name the key, what it holds and what it should hold.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from decimal import Decimal, InvalidOperation
from typing import Any, Literal, TypeVar

__all__ = ["TableError", "field_names", "from_table", "to_decimal"]

R = TypeVar("R")
_hints: dict[type, dict[str, Any]] = {}


class TableError(ValueError):
    """A table does not fit a record; ``key`` is the dotted path of the bad value."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(f"key '{key}': {problem}")
        self.key = key
        self.problem = problem


def field_names(cls: type) -> list[str]:
    """The names a table may hold for the record, in declaration order."""
    return [f.name for f in _table_fields(cls)]


def to_decimal(value: Any) -> Decimal:
    """An exact Decimal from an int, a str or a float (a float by its shortest repr,
    so 0.1 is Decimal('0.1'), not the binary fraction). Raises ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int | float | str):
        raise ValueError(f"expected a number, got {_kind(value)}")
    try:
        number = value if isinstance(value, Decimal) else Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError(f"expected a number, got {_kind(value)} that is not one") from None
    if not number.is_finite():
        raise ValueError(f"expected a finite number, got {_kind(value)}")
    return number


def from_table(cls: type[R], table: Any, where: str) -> R:
    """Build the dataclass ``cls`` from a TOML table, checking every value.

    :param where: the table's dotted name, used in errors (e.g. ``providers.ollama``).
    :raises TableError: a key is missing, unknown or holds a value of the wrong kind.
    """
    if not isinstance(table, dict):
        raise TableError(where, f"expected a table, got {_kind(table)}")
    hints = _hints_of(cls)
    values: dict[str, Any] = {}
    for spec in _table_fields(cls):
        key = f"{where}.{spec.name}"
        if spec.name not in table:
            if spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING:
                raise TableError(key, "this key is required")
            continue
        value = _convert(table[spec.name], hints[spec.name], key)
        _check_bounds(value, spec.metadata, key)
        values[spec.name] = value
    unknown = [k for k in table if k not in hints]
    if unknown:
        raise TableError(f"{where}.{unknown[0]}", f"unknown key (known: {', '.join(hints)})")
    return cls(**values)


def _check_bounds(value: Any, bounds: Any, key: str) -> None:
    """A field's ``metadata`` bounds: ``gt`` (greater than), ``ge`` and ``le`` (at least,
    at most); NaN is never within them."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return
    if value != value:  # NaN
        raise TableError(key, "expected a number, got NaN")
    low, at_least, at_most = bounds.get("gt"), bounds.get("ge"), bounds.get("le")
    if low is not None and not value > low:
        raise TableError(key, f"must be greater than {low}, got {value!r}")
    if at_least is not None and not value >= at_least:
        raise TableError(key, f"must be at least {at_least}, got {value!r}")
    if at_most is not None and not value <= at_most:
        raise TableError(key, f"must be at most {at_most}, got {value!r}")


def _table_fields(cls: type) -> list[dataclasses.Field[Any]]:
    # A field the record sets itself (init=False) is not read from the table.
    return [f for f in dataclasses.fields(cls) if f.init]


def _hints_of(cls: type) -> dict[str, Any]:
    hints = _hints.get(cls)
    if hints is None:
        every = typing.get_type_hints(cls)
        hints = _hints[cls] = {f.name: every[f.name] for f in _table_fields(cls)}
    return hints


def _convert(value: Any, hint: Any, key: str) -> Any:
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        choices = [o for o in options if o is not type(None)]
        if len(choices) == 1:
            # Re-raised as is: a nested table's error keeps its own, deeper key.
            return _convert(value, choices[0], key)
        problems = []
        for option in choices:
            try:
                return _convert(value, option, key)
            except TableError as exc:
                problems.append(exc.problem)
        raise TableError(key, " or ".join(problems))
    if origin is Literal:
        allowed = typing.get_args(hint)
        if value not in allowed:
            expected = ", ".join(map(repr, allowed))
            raise TableError(key, f"expected one of {expected}, got {_kind(value)}")
        return value
    if origin is list:
        (item,) = typing.get_args(hint)
        if not isinstance(value, list):
            raise TableError(key, f"expected a list, got {_kind(value)}")
        return [_convert(v, item, f"{key}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        _, item = typing.get_args(hint)
        if not isinstance(value, dict):
            raise TableError(key, f"expected a table, got {_kind(value)}")
        return {str(k): _convert(v, item, f"{key}.{k}") for k, v in value.items()}
    if dataclasses.is_dataclass(hint):
        return from_table(hint, value, key)  # type: ignore[arg-type]
    return _scalar(value, hint, key)


def _scalar(value: Any, hint: Any, key: str) -> Any:
    if hint is Decimal:
        try:
            return to_decimal(value)
        except ValueError as exc:
            raise TableError(key, str(exc)) from None
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    # bool is an int in Python, but `context_window = true` is a mistake, not 1.
    if isinstance(value, hint) and not (hint is int and isinstance(value, bool)):
        return value
    raise TableError(key, f"expected {_NAMES.get(hint, hint.__name__)}, got {_kind(value)}")


_NAMES = {str: "a string", int: "an integer", bool: "true or false", float: "a number"}


def _kind(value: Any) -> str:
    """What a value is, for an error. A string is never quoted: a misplaced value may be
    a key or a token (say, a header line where a table was meant)."""
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float | Decimal):
        return f"the number {value}"
    return f"a {type(value).__name__}"
