"""The plugin lock: which plugin distributions a project runs, at which version, with
which files (``modelplug.lock``, TOML, written by ``modelplug plugins lock``).

With ``[plugins] lock = "modelplug.lock"`` (or ``MODELPLUG_PLUGIN_LOCK``), an installed
plugin that is not in the lock, or whose version, entry point or files differ from it, is
not loaded (:class:`LockGuard`); ``lock_mode = "strict"`` makes that a refusal to start.
Which files count is :mod:`modelplug.host.plugin_files`' business; what was verified is
remembered by :class:`modelplug.host.file_digests.VerificationCache`. Writing the lock
is the CLI's (:mod:`modelplug.cli.lock_writer`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from modelplug.contract.errors import ConfigError
from modelplug.contract.records import TableError, from_table
from modelplug.contract.settings import Settings
from modelplug.host.file_digests import VerificationCache, sha256_of, stamp_of
from modelplug.host.plugin_files import distribution_files

__all__ = ["LockGuard", "LockSetting", "LockedPlugin", "differences", "lock_setting", "read_lock"]

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


def lock_setting(settings: Settings) -> LockSetting | None:
    """The lock the settings name, or None. The last layer that names a lock wins (user
    file, project file, ``MODELPLUG_PLUGIN_LOCK``), a relative path read from the file
    that names it; ``lock_mode = "strict"`` in any layer holds, so a project file cannot
    soften the user's strict mode. (The values' types were checked with the toggles.)"""
    found: LockSetting | None = None
    strict = False
    for layer in settings.layers:
        plugins = layer.data.get("plugins")
        if not isinstance(plugins, dict):
            continue
        strict = strict or plugins.get("lock_mode") == "strict"
        if isinstance(plugins.get("lock"), str) and plugins["lock"]:
            base = layer.path.parent if layer.path is not None else Path.cwd()
            where = f"{layer.name} {layer.path}" if layer.path else layer.name
            found = LockSetting(base / Path(plugins["lock"]).expanduser(), False, where)
    return LockSetting(found.path, strict, found.where) if found else None


def read_lock(path: Path) -> dict[str, LockedPlugin]:
    """The plugins a lock file holds, by canonical distribution name (none when the
    file is missing: the caller says so).

    :raises ConfigError: the file is not a lock this modelplug wrote.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != 1:
            raise TableError("version", "must be 1")
        return {
            canonical_name(n): from_table(LockedPlugin, {**e, "name": n}, n)
            for n, e in data.get("plugins", {}).items()
        }
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError, TableError, AttributeError, TypeError) as exc:
        raise ConfigError(
            f"{path}: not a plugin lock ({exc}); write it again with `modelplug plugins lock`"
        ) from None


def differences(
    locked: LockedPlugin, dist: metadata.Distribution, ep: metadata.EntryPoint, read: list[Path]
) -> list[str]:
    """How an installed plugin differs from its lock entry, in short phrases ("version
    1.2 (locked: 1.1)", "file x/a.py changed"); empty when it matches. ``read``
    receives every path the answer depends on."""
    if dist.version != locked.version:
        return [f"version {dist.version} (locked: {locked.version})"]
    # The entry point is in entry_points.txt, one of the files.
    files = {f.key: f.path for f in distribution_files(dist, ep.value, read)}
    found = [f"file {k} is {'new' if k in files else 'gone'}" for k in files.keys() ^ locked.files]
    found += [
        f"file {key} changed"
        for key, expected in locked.files.items()
        if key in files and sha256_of(files[key]) != expected
    ]
    read += files.values()
    return found


class LockGuard:
    """Checks each enabled entry-point plugin against the lock before it is imported."""

    def __init__(self, setting: LockSetting, data_dir: Path | None) -> None:
        self.setting = setting
        self.cache = VerificationCache(data_dir)
        self.lock_stamp = stamp_of(setting.path)
        self._locked: dict[str, LockedPlugin] | None = None

    @property
    def locked(self) -> dict[str, LockedPlugin]:
        """The lock's plugins, read only when a start needs them."""
        if self._locked is None:
            self._locked = read_lock(self.setting.path)
        return self._locked

    def check(self, ep: metadata.EntryPoint) -> str | None:
        """Why ``ep`` must not load (one phrase naming its distribution and what
        differs), or None when it matches the lock."""
        dist = ep.dist
        if dist is None:
            return f"entry point {ep.name!r} has no distribution, so the lock cannot hold it"
        key = f"{ep.name} = {ep.value} @ {dist.locate_file('')}"
        if self.cache.still_verified(self.setting.path, self.lock_stamp, key):
            return None
        locked = self.locked.get(canonical_name(dist.name))
        if locked is None:
            return f"{dist.name} {dist.version} is not in the plugin lock {self.setting.path}"
        read: list[Path] = []
        found = differences(locked, dist, ep, read)
        if not found:
            plugins = self.cache.for_lock(self.setting.path, self.lock_stamp)["plugins"]
            plugins[key], self.cache.changed = [[str(p), stamp_of(p)] for p in read], True
            return None
        shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
        return f"{dist.name} differs from the plugin lock {self.setting.path}: {shown}"

    def removed(self, entry_point_names: Iterable[str]) -> list[str]:
        """Locked distributions whose entry point is no longer installed (known from
        the cache when the lock did not change, so a quiet start never parses it)."""
        verified = self.cache.for_lock(self.setting.path, self.lock_stamp)
        pairs = verified.get("locked")
        if not isinstance(pairs, list):
            pairs = [[p.name, p.entry_point.split("=")[0].strip()] for p in self.locked.values()]
            verified["locked"], self.cache.changed = pairs, True
        return sorted(str(name) for name, ep_name in pairs if ep_name not in set(entry_point_names))
