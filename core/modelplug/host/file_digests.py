"""The sha256 of a file, remembered by its size and times, so checking a plugin lock at
every start reads each file once, not once per start.

The cache is one JSON file in the data directory (``plugin-file-digests.json``, 0600 in a
0700 directory). An entry is used only while the file's size, modification time *and*
change time (``st_ctime_ns``) are what they were when it was hashed: a program can set a
file's modification time back (``os.utime``) but not its change time, so a file rewritten
to the same size with its old mtime is hashed again. The cache is speed only: a missing,
unreadable or unwritable one costs a rehash, never a wrong answer. ``modelplug plugins
audit`` does not use it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["CACHE_NAME", "DigestCache", "sha256_of"]

CACHE_NAME = "plugin-file-digests.json"
CHUNK = 1 << 16


def sha256_of(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    import hashlib  # here: a start whose files are all cached never needs it

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


class DigestCache:
    """File digests keyed by path, valid while (size, mtime, ctime) are unchanged.

    :param directory: the data directory, or None to hash every time (the audit).
    """

    def __init__(self, directory: Path | None) -> None:
        self.path = directory / CACHE_NAME if directory is not None else None
        self._entries: dict[str, list[int | str]] | None = None
        self._changed = False

    def digest(self, path: Path) -> str | None:
        """The file's hex sha256, or None when it cannot be read (it is gone)."""
        try:
            info = os.stat(path)
        except OSError:
            return None
        stamp: list[int | str] = [info.st_size, info.st_mtime_ns, info.st_ctime_ns]
        key = os.fspath(path)
        entries = self._load()
        known = entries.get(key)
        if known is not None and known[:3] == stamp:
            return str(known[3])
        try:
            value = sha256_of(path)
        except OSError:
            return None
        if self.path is not None:
            entries[key] = [*stamp, value]
            self._changed = True
        return value

    def _load(self) -> dict[str, list[int | str]]:
        if self._entries is None:
            self._entries = {}
            if self.path is not None:
                try:
                    data = json.loads(self.path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    data = None
                if isinstance(data, dict) and isinstance(data.get("files"), dict):
                    self._entries = {
                        k: v
                        for k, v in data["files"].items()
                        if isinstance(v, list) and len(v) == 4
                    }
        return self._entries

    def save(self) -> None:
        """Write the digests learned in this process, if any (atomically; errors ignored:
        a read-only data directory only means hashing again next time)."""
        if not self._changed or self.path is None or self._entries is None:
            return
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            partial = self.path.with_name(f".{self.path.name}.{os.getpid()}")
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"version": 1, "files": self._entries}, handle)
            os.replace(partial, self.path)
        except OSError:
            return
        self._changed = False
