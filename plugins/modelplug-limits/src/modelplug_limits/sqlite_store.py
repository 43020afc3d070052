"""The counters file of the limits: the kit's :class:`~modelplug_kit.SqliteCounters` (every
process on this machine shares it), named ``limits.sqlite3`` in the data directory."""

from __future__ import annotations

from modelplug_kit import SqliteCounters

from .stores import FILE_NAME

__all__ = ["FILE_NAME", "SqliteCounters"]
