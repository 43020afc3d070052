"""Which genai-prices model a route names, and its context window, answered from
``model_index.json`` without importing genai-prices.

genai-prices' import (its data module, pydantic, httpx2) costs more than the rest of a
``Client().resolve()`` together, and resolving needs only one number from it: the
model's context window. The index (written by :mod:`modelplug_prices.build_index`)
holds genai-prices' own matching rules in its own order, and :func:`find_window`
applies them as ``DataSnapshot.find_provider_model`` does, so the answer is the same
(tests/test_model_index.py checks every model of the data, and spellings around them).

The shipped index answers only for the genai-prices version it was built from. With
another version installed (genai-prices releases more often than this plugin), the
first resolve builds the index for that version from genai-prices itself and keeps it
in modelplug's data directory (``prices/model_index-<version>.json``, owner-only), so
only that one process pays genai-prices' import. While genai-prices' bundled data is
not the one in use (live updates on, or a snapshot someone set), :func:`find_window`
asks genai-prices itself.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from datetime import date
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from modelplug import Settings

__all__ = [
    "Answer",
    "current_index",
    "find_window",
    "index_matches_installed",
    "installed_version",
    "load_index",
    "lookup",
]

INDEX_PATH = Path(__file__).with_name("model_index.json")
Clause = Mapping[str, Any]


class Answer(NamedTuple):
    """A model genai-prices knows: its provider id, model id and context window."""

    provider: str
    model: str
    context_window: int | None


@functools.cache
def load_index() -> Mapping[str, Any]:
    data: Mapping[str, Any] = json.loads(INDEX_PATH.read_text(encoding="utf-8"))
    return data


@functools.cache
def installed_version() -> str | None:
    """The installed genai-prices' version, read from its metadata (no import)."""
    try:
        return metadata.version("genai-prices")
    except metadata.PackageNotFoundError:
        return None


def index_matches_installed() -> bool:
    """True when the shipped index was built from the installed genai-prices."""
    installed = installed_version()
    return installed is not None and installed == load_index()["genai_prices_version"]


_built: dict[Path, Mapping[str, Any]] = {}


def current_index(settings: Settings) -> Mapping[str, Any] | None:
    """The index for the installed genai-prices: the shipped one when it matches, else
    the one kept in the settings' data directory for this version, else one built now
    (importing genai-prices once) and kept there for the next process; None without
    genai-prices."""
    if index_matches_installed():
        return load_index()
    version = installed_version()
    if version is None:
        return None
    path = settings.data_dir() / "prices" / f"model_index-{version}.json"
    if path in _built:
        return _built[path]
    index = _read_kept(path, version)
    if index is None:
        from .build_index import build

        index = build()
        _keep(path, index)
    _built[path] = index
    return index


def _read_kept(path: Path, version: str) -> Mapping[str, Any] | None:
    """A kept index, or None when it is missing, unreadable or for another version
    (a half-written or hand-edited file is rebuilt, never trusted)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("genai_prices_version") != version:
        return None
    if not isinstance(data.get("providers"), list):
        return None
    return data


def _keep(path: Path, index: Mapping[str, Any]) -> None:
    """Write the index for later processes, atomically and owner-only; a directory
    that cannot be written only means the next process builds it again."""
    from .build_index import render

    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".model_index-")
    except OSError:
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(render(dict(index)))
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)  # a full disk leaves no half file


def _bundled_data_in_use() -> bool:
    """False once someone (live updates, the user) replaced genai-prices' data with
    ``set_custom_snapshot``. That needs genai-prices imported, so a process that has not
    imported it never does here; one that has asks its public ``get_snapshot`` whether
    the snapshot in use holds the bundled providers (which loads the bundled data, if
    nothing had yet)."""
    if "genai_prices.data_snapshot" not in sys.modules:
        return True
    from genai_prices.data import providers
    from genai_prices.data_snapshot import get_snapshot

    return get_snapshot().providers is providers


def _matches(clause: Clause, text: str) -> bool:
    """genai-prices' clause semantics (genai_prices.types.Clause*.is_match)."""
    ((kind, value),) = clause.items()
    if isinstance(value, str):
        return _matches_text(kind, value, text)
    if kind == "or":
        return any(_matches(part, text) for part in value)
    if kind == "and":
        return all(_matches(part, text) for part in value)
    raise ValueError(f"model_index.json: unknown clause {kind!r}")


def _matches_text(kind: str, value: str, text: str) -> bool:
    if kind == "starts_with":
        return text.lower().startswith(value.lower())
    if kind == "ends_with":
        return text.lower().endswith(value.lower())
    if kind == "contains":
        return value.lower() in text.lower()
    if kind == "regex":
        return re.search(value, text) is not None
    if kind == "equals":
        return text.lower() == value.lower()
    raise ValueError(f"model_index.json: unknown clause {kind!r}")


def _provider_by_id(providers: Sequence[Mapping[str, Any]], pid: str) -> Mapping[str, Any] | None:
    wanted = pid.lower().strip()
    for provider in providers:
        if provider["id"] == wanted:
            return provider
    for provider in providers:
        rule = provider["provider_match"]
        if rule is not None and _matches(rule, wanted):
            return provider
    return None


def _find_provider(
    providers: Sequence[Mapping[str, Any]], ref: str, pid: str
) -> Mapping[str, Any] | None:
    found = _provider_by_id(providers, pid)
    if found is not None or pid.lower() != "litellm":
        return found
    for provider in providers:
        rule = provider["model_match"]
        if rule is not None and _matches(rule, ref):
            return provider
    return None


def _match_model(
    provider: Mapping[str, Any], ref: str, providers: Sequence[Mapping[str, Any]] | None
) -> list[Any] | None:
    for model in provider["models"]:
        if _matches(model[1], ref.lower()):
            return list(model)
    for fallback_id in provider["fallback_model_providers"] if providers else ():
        fallback = next((p for p in providers or () if p["id"] == fallback_id), None)
        if fallback is not None and (model := _match_model(fallback, ref, None)):
            return model
    return None


_COMPACT_DATE = re.compile(r"(-)(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|$)")


def _dashed_dates(ref: str) -> str:
    """``-20251211`` written ``-2025-12-11`` (genai-prices' second try for a ref)."""

    def dashed(found: re.Match[str]) -> str:
        year, month, day = (int(found.group(i)) for i in range(2, 5))
        try:
            date(year, month, day)
        except ValueError:
            return found.group(0)
        return f"{found.group(1)}{year:04d}-{month:02d}-{day:02d}"

    return _COMPACT_DATE.sub(dashed, ref)


def lookup(ref: str, pid: str, index: Mapping[str, Any] | None = None) -> Answer | None:
    """What ``find_provider_model(ref, None, pid, None)`` finds in the index's data,
    or None where it raises LookupError."""
    providers = (index or load_index())["providers"]
    ref = ref.lower()
    if pid.lower() == "litellm" and "/" in ref:
        actual_pid, actual_ref = ref.split("/", 1)
        if actual_pid and _provider_by_id(providers, actual_pid) is not None:
            pid, ref = actual_pid, actual_ref
    provider = _find_provider(providers, ref, pid)
    if provider is None:
        return None
    model = _match_model(provider, ref, providers)
    if model is None and (dashed := _dashed_dates(ref)) != ref:
        model = _match_model(provider, dashed, providers)
    if model is None:
        return None
    return Answer(provider["id"], model[0], model[2])


def find_window(provider: str, model: str, settings: Settings) -> Answer | None:
    """The model a route names as genai-prices would find it (see
    :func:`modelplug_prices.table.find`): from the index for the installed genai-prices
    (see :func:`current_index`) while its bundled data is in use, else from
    genai-prices itself."""
    from .table import candidate_refs, provider_id

    pid = provider_id(provider)
    index = current_index(settings) if _bundled_data_in_use() else None
    if index is not None:
        for ref in candidate_refs(model):
            answer = lookup(ref, pid, index)
            if answer is not None:
                return answer
        return None
    from .table import find

    found = find(provider, model)
    if found is None:
        return None
    return Answer(found.provider.id, found.model.id, found.model.context_window)
