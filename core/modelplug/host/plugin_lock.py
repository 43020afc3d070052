"""The plugin lock: which plugin distributions a project runs, at which version, with
which files (``modelplug.lock``, TOML, written by ``modelplug plugins lock``).

With ``[plugins] lock = "modelplug.lock"`` (or ``MODELPLUG_PLUGIN_LOCK``), an installed
plugin that is not in the lock, or whose version, entry point or files differ from it, is
not loaded (:class:`LockGuard`); ``lock_mode = "strict"`` makes that a refusal to start.
Which files count is :mod:`modelplug.host.plugin_files`' business; their digests come
through :class:`modelplug.host.file_digests.DigestCache`.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from modelplug.contract.errors import ConfigError
from modelplug.contract.settings import Settings
from modelplug.host.file_digests import DigestCache, sha256_of
from modelplug.host.plugin_files import distribution_files, is_editable

__all__ = [
    "LOCK_FILE_NAME",
    "LockGuard",
    "LockSetting",
    "LockedPlugin",
    "canonical_name",
    "combined_digest",
    "differences",
    "entry_point_text",
    "lock_setting",
    "lock_text",
    "read_lock",
    "snapshot",
    "write_lock",
]

LOCK_FILE_NAME = "modelplug.lock"
ACCEPT = "`modelplug plugins lock` accepts it"


@dataclass
class LockedPlugin:
    """One plugin as the lock holds it."""

    name: str
    version: str
    entry_point: str
    editable: bool
    sha256: str
    files: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LockSetting:
    """Where the lock is, whether a difference is fatal, and which setting said so."""

    path: Path
    strict: bool
    where: str


def canonical_name(name: str) -> str:
    """A distribution's name as PEP 503 compares them: ``Modelplug_X`` -> ``modelplug-x``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def entry_point_text(ep: metadata.EntryPoint) -> str:
    return f"{ep.name} = {ep.value}"


def lock_setting(settings: Settings) -> LockSetting | None:
    """The lock the settings name, or None. The last layer that names a lock wins (user
    file, project file, ``MODELPLUG_PLUGIN_LOCK``), a relative path read from the file
    that names it; ``lock_mode = "strict"`` in any layer holds, so a project file cannot
    soften the user's strict mode."""
    found: LockSetting | None = None
    strict = False
    for layer in settings.layers:
        plugins = layer.data.get("plugins")
        if not isinstance(plugins, dict):
            continue
        where = f"{layer.name} {layer.path}" if layer.path else layer.name
        mode = plugins.get("lock_mode")
        if mode is not None and mode not in ("warn", "strict"):
            raise ConfigError(f'{where}: plugins.lock_mode must be "warn" or "strict"')
        strict = strict or mode == "strict"
        value = plugins.get("lock")
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{where}: plugins.lock must be the path of a lock file")
        path = Path(value).expanduser()
        if not path.is_absolute():
            base = layer.path.parent if layer.path is not None else Path.cwd()
            path = base / path
        found = LockSetting(path, False, where)
    if found is None:
        return None
    return LockSetting(found.path, strict, found.where)


def read_lock(path: Path) -> dict[str, LockedPlugin]:
    """The plugins a lock file holds, by canonical distribution name.

    :raises ConfigError: the file is not a valid lock (a missing file is an empty lock:
        the caller says so).
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the plugin lock: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML in the plugin lock: {exc}") from None
    table = data.get("plugins", {})
    if data.get("version") != 1 or not isinstance(table, dict):
        raise ConfigError(
            f"{path}: not a plugin lock of this modelplug (version = 1, [plugins.NAME]); "
            "write it again with `modelplug plugins lock`"
        )
    out: dict[str, LockedPlugin] = {}
    for name, entry in table.items():
        try:
            plugin = LockedPlugin(
                name=name,
                version=str(entry["version"]),
                entry_point=str(entry["entry_point"]),
                editable=bool(entry.get("editable", False)),
                sha256=str(entry["sha256"]),
                files={str(k): str(v) for k, v in dict(entry.get("files", {})).items()},
            )
        except (KeyError, TypeError, ValueError):
            raise ConfigError(
                f"{path}: plugins.{name} needs version, entry_point, sha256 and files; "
                "write it again with `modelplug plugins lock`"
            ) from None
        out[canonical_name(name)] = plugin
    return out


def combined_digest(files: dict[str, str]) -> str:
    """One sha256 over a plugin's files: over the sorted ``<key> <sha256>`` lines."""
    import hashlib

    text = "".join(f"{key} {files[key]}\n" for key in sorted(files))
    return hashlib.sha256(text.encode()).hexdigest()


def lock_text(plugins: Iterable[LockedPlugin]) -> str:
    """The lock file for ``plugins``: stable order, one line per file, for diffs."""
    q = _quote
    lines = [
        "# The plugins this project runs: written by `modelplug plugins lock`, checked at",
        "# every start when [plugins] lock names this file. Review a change to it as you",
        "# review code: a changed digest is changed code.",
        "version = 1",
    ]
    for plugin in sorted(plugins, key=lambda p: canonical_name(p.name)):
        lines += [
            "",
            f"[plugins.{q(plugin.name)}]",
            f"version = {q(plugin.version)}",
            f"entry_point = {q(plugin.entry_point)}",
            f"editable = {'true' if plugin.editable else 'false'}",
            f"sha256 = {q(plugin.sha256)}",
            "",
            f"[plugins.{q(plugin.name)}.files]",
            *(f"{q(key)} = {q(plugin.files[key])}" for key in sorted(plugin.files)),
        ]
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text)


def differences(
    locked: LockedPlugin, dist: metadata.Distribution, ep: metadata.EntryPoint, cache: DigestCache
) -> list[str]:
    """How an installed plugin differs from its lock entry, in short phrases ("version
    1.2 (locked: 1.1)", "file x/a.py changed"); empty when it matches."""
    version = dist.version
    if version != locked.version:
        return [f"version {version} (locked: {locked.version})"]
    found: list[str] = []
    if entry_point_text(ep) != locked.entry_point:
        found.append(f"entry point {entry_point_text(ep)!r} (locked: {locked.entry_point!r})")
    files = {f.key: f for f in distribution_files(dist, ep.value)}
    found += [f"file {key} is new" for key in files if key not in locked.files]
    found += [f"file {key} is gone" for key in locked.files if key not in files]
    for key, expected in locked.files.items():
        if key in files and cache.digest(files[key].path) != expected:
            found.append(f"file {key} changed")
    return found


def snapshot(
    dist: metadata.Distribution, ep: metadata.EntryPoint
) -> tuple[LockedPlugin, list[str]]:
    """The lock entry for an installed plugin as it is now, with notes on files that no
    longer match RECORD's own digest or are gone (locked as they are, and named)."""
    files: dict[str, str] = {}
    notes: list[str] = []
    for found in distribution_files(dist, ep.value):
        try:
            digest = sha256_of(found.path)
        except OSError:
            notes.append(f"{dist.name}: {found.key} is listed in RECORD but missing")
            continue
        files[found.key] = digest
        recorded = found.recorded or ""
        if recorded.startswith("sha256=") and _record_hex(recorded) != digest:
            notes.append(f"{dist.name}: {found.key} no longer matches its RECORD digest")
    locked = LockedPlugin(
        name=dist.name,
        version=dist.version,
        entry_point=entry_point_text(ep),
        editable=is_editable(dist),
        sha256=combined_digest(files),
        files=files,
    )
    return locked, notes


def write_lock(path: Path, plugins: Iterable[LockedPlugin]) -> None:
    """Write the lock file (through a temporary file, so a reader never sees half)."""
    import os

    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(lock_text(plugins), encoding="utf-8")
    os.replace(partial, path)


def _record_hex(recorded: str) -> str:
    """RECORD's ``sha256=<urlsafe base64, no padding>`` as hex."""
    import base64

    value = recorded.removeprefix("sha256=")
    try:
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).hex()
    except ValueError:
        return ""


class LockGuard:
    """Checks each enabled entry-point plugin against the lock before it is imported.

    :param setting: the lock and its mode.
    :param cache: where verified digests are remembered.
    """

    def __init__(self, setting: LockSetting, cache: DigestCache) -> None:
        self.setting = setting
        self.cache = cache
        self.locked = read_lock(setting.path)
        self.missing_file = not setting.path.exists()
        self.seen: set[str] = set()

    @classmethod
    def from_settings(cls, settings: Settings) -> LockGuard | None:
        setting = lock_setting(settings)
        if setting is None:
            return None
        return cls(setting, DigestCache(settings.data_dir()))

    def check(self, ep: metadata.EntryPoint) -> str | None:
        """Why ``ep`` must not load (one phrase naming its distribution and what
        differs), or None when it matches the lock."""
        dist = ep.dist
        if dist is None:
            return f"entry point {ep.name!r} has no distribution, so the lock cannot hold it"
        name = canonical_name(dist.name)
        self.seen.add(name)
        locked = self.locked.get(name)
        if locked is None:
            return f"{dist.name} {dist.version} is not in the plugin lock {self.setting.path}"
        found = differences(locked, dist, ep, self.cache)
        if not found:
            return None
        shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
        return f"{dist.name} differs from the plugin lock {self.setting.path}: {shown}"

    def removed(self, installed: Iterable[str]) -> list[str]:
        """Locked distributions no longer installed (as a modelplug plugin)."""
        present = {canonical_name(n) for n in installed}
        return sorted(p.name for k, p in self.locked.items() if k not in present)

    def finish(self) -> None:
        self.cache.save()
