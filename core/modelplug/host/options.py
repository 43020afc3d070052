"""A plugin's options table read into a typed record, with the same errors everywhere.

A plugin declares its options as a dataclass (defaults are the defaults; ``field(
metadata={"gt": 0})`` bounds a number) and reads them with :func:`read_options`. A
wrong value is a ConfigError naming ``[section] key``, what it holds and what it should
hold (a string is never quoted back: it may be a token); an unknown key is a one-line
warning naming the keys the plugin knows, since a misspelt option silently ignored is
the worst outcome.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from modelplug.contract.errors import ConfigError
from modelplug.contract.records import TableError, field_names, from_table
from modelplug.contract.settings import warn

if TYPE_CHECKING:
    from modelplug.contract.settings import Settings

__all__ = ["read_options"]

R = TypeVar("R")


def read_options(
    settings: Settings,
    section: str,
    record: type[R],
    *,
    project: bool = True,
    overrides: Mapping[str, Any] | None = None,
) -> R:
    """The ``[section]`` table of ``settings`` as a ``record`` (a dataclass).

    :param settings: the merged settings (``client.settings``).
    :param section: the table's name, the plugin's short name (``anthropic``).
    :param record: a dataclass whose fields are the options and their defaults.
    :param project: False leaves out what a project file says (options that must be the
        user's own choice, such as ones that reach the network).
    :param overrides: values given in code (a policy object's own options), checked the
        same way and winning over the table.
    :raises ConfigError: a value has the wrong kind or is out of bounds.
    """
    if not dataclasses.is_dataclass(record):
        raise TypeError(f"read_options takes a dataclass, got {record!r}")
    raw = {**settings.plugin_options(section, project=project), **(overrides or {})}
    known = field_names(record)
    unknown = sorted(k for k in raw if k not in known)
    if unknown:
        warn(
            f"[{section}] has unknown option(s) {', '.join(unknown)}; known: {', '.join(known)}",
            stacklevel=2,
        )
    table: dict[str, Any] = {k: v for k, v in raw.items() if k in known}
    try:
        return from_table(record, table, section)
    except TableError as exc:
        key = exc.key.removeprefix(f"{section}.")
        raise ConfigError(f"[{section}] {key}: {exc.problem}") from None
