"""File digests, and which plugins were verified against which lock, remembered by the
stamps of the files read, so a start where nothing changed stats each locked file and
reads nothing else (not the files, not the lock, not RECORD).

The cache is one JSON file in the data directory (``plugin-file-digests.json``, 0600 in a
0700 directory). A stamp is a path's (size, modification time, change time): a program
can set a file's modification time back (``os.utime``), not its change time, so a file
rewritten to its old size and mtime is read again. The cache is speed only: a missing,
unreadable or unwritable one costs a rehash, never a wrong answer. ``modelplug plugins
audit`` does not use it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["CACHE_NAME", "VerificationCache", "sha256_of", "stamp_of"]

CACHE_NAME = "plugin-file-digests.json"


def sha256_of(path: Path) -> str | None:
    """The hex sha256 of a file's bytes, or None when it cannot be read."""
    import hashlib  # here: a start where nothing changed never needs it

    try:
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None


def stamp_of(path: Path | str) -> list[int] | None:
    """A file's or directory's (size, mtime, ctime), or None when it is gone: what must
    be unchanged for a remembered answer to hold."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns]


class VerificationCache:
    """Plugins verified against one lock: for each, the stamps of the paths its
    verification read (each file's digest matched the lock's).

    :param directory: the data directory, or None to remember nothing (the audit).
    """

    def __init__(self, directory: Path | None) -> None:
        self.path = directory / CACHE_NAME if directory is not None else None
        self._data: dict[str, Any] | None = None
        self.changed = False

    def for_lock(self, lock: Path, lock_stamp: list[int] | None) -> dict[str, Any]:
        """What was verified against this lock as it is now (emptied when the lock
        changed): ``plugins`` (key -> [[path, stamp], ...]) and ``locked`` (the lock's
        distribution and entry point names)."""
        if self._data is None:
            try:
                self._data = json.loads(self.path.read_text("utf-8") if self.path else "null")
            except (OSError, ValueError):
                self._data = None
        if not isinstance(self._data, dict) or self._data.get("lock") != [str(lock), lock_stamp]:
            self._data = {"lock": [str(lock), lock_stamp], "plugins": {}}
        return self._data

    def still_verified(self, lock: Path, lock_stamp: list[int] | None, key: str) -> bool:
        """Whether plugin ``key`` was verified against this lock and every path its
        verification read still has the stamp it had."""
        stamps = self.for_lock(lock, lock_stamp)["plugins"].get(key)
        return bool(stamps) and all(stamp_of(path) == stamp for path, stamp in stamps)

    def save(self) -> None:
        """Write what this process learned, if anything (atomically; errors ignored:
        a read-only data directory only means verifying again next time)."""
        if not self.changed or self.path is None:
            return
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            partial = self.path.with_name(f".{self.path.name}.{os.getpid()}")
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(self._data, handle)
            os.replace(partial, self.path)
        except OSError:
            pass
