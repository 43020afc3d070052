"""What a probe learnt about a model, used by every later resolve of its route.

``Client.probe`` asks the server behind a route what it actually serves (the context
window it loaded, whether it takes tools). The answer is kept per provider, base URL and
model: in memory on the Client, and in ``probes.json`` of this machine's data directory
(``client.settings.data_dir()``; the directory 0700, the file 0600) so the next process
uses it too. An answer older than :data:`MAX_AGE` is forgotten: a local server is
restarted with other flags (``llama-server -c``) between sessions more often than within
one, and ``modelplug resolve --probe`` asks again whenever you want.

A running process sees what another one probed since: the file is read again whenever
it was replaced (one ``stat`` a lookup). Two processes writing at
once may lose one of their answers (the last file written wins): it is a cache, and the
loser asks again on its next probe.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from modelplug.contract.routes import ModelInfo, Route

__all__ = ["FIELDS", "MAX_AGE", "PROBE_ADVICE", "ProbeCache", "probed_over"]

# A day: long enough for a working session and the next morning's, short enough that a
# server restarted with another window is asked again without anyone thinking of it.
MAX_AGE = 24 * 3600.0
FILE = "probes.json"
# What a probe may say about a model. Never a price: a server does not set what it costs.
FIELDS = (
    "context_window",
    "max_output_tokens",
    "supports_tools",
    "supports_images",
    "thinking",
    "text_tool_calls",
    "reasoning_dialect",
    "structured_output",
)
# A provider plugin's note that asks for a probe (its guess of the context window) says
# this; once a probe has given the window, the note is stale and is left out.
PROBE_ADVICE = "modelplug resolve --probe"
_TYPES: dict[str, tuple[type, ...]] = {
    "context_window": (int,),
    "max_output_tokens": (int,),
    "supports_tools": (bool,),
    "supports_images": (bool,),
}


def _key(route: Route) -> str:
    return json.dumps([route.provider, route.endpoint.base_url or "", route.model])


def _known(info: ModelInfo) -> dict[str, Any]:
    return {name: getattr(info, name) for name in FIELDS if getattr(info, name) is not None}


def _read_entry(raw: Any) -> tuple[ModelInfo, float] | None:
    """An entry of the file, or None for one this version cannot read (the file is
    ours, but a hand edit or another version must not break resolving)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("at"), int | float):
        return None
    fields = raw.get("info")
    if not isinstance(fields, dict):
        return None
    known: dict[str, Any] = {}
    for name in FIELDS:
        value = fields.get(name)
        if value is None:
            continue
        kinds = _TYPES.get(name, (str,))
        # JSON's true is an int to Python; as a token count it means nothing.
        if not isinstance(value, kinds) or (int in kinds and isinstance(value, bool)):
            return None
        known[name] = value
    return ModelInfo(**known), float(raw["at"])


class ProbeCache:
    """One Client's probe answers (see the module). ``now`` is the clock, for tests."""

    def __init__(self, directory: Path, now: Callable[[], float] = time.time) -> None:
        self.path = directory / FILE
        self._now = now
        self._entries: dict[str, tuple[ModelInfo, float]] = {}
        # The file's (inode, mtime_ns, size) when read: each write is a new file (a rename).
        self._stamp: tuple[int, int, int] | None = None
        self._lock = threading.Lock()

    def get(self, route: Route) -> tuple[ModelInfo, float] | None:
        """What a probe said about ``route``'s model and how many seconds ago, or None
        (never probed, or longer ago than :data:`MAX_AGE`)."""
        stamp = self._file_stamp()
        if stamp != self._stamp:
            self._entries, self._stamp = self._load(), stamp
        found = self._entries.get(_key(route))
        if found is None:
            return None
        age = self._now() - found[1]
        return (found[0], age) if 0 <= age <= MAX_AGE else None

    def put(self, route: Route, info: ModelInfo) -> None:
        """Keep what a probe of ``route`` said (nothing, when it knew nothing), here and
        in the file; a file that cannot be written leaves the answer in memory only."""
        known = _known(info)
        if not known:
            return
        at = self._now()
        with self._lock:
            entries = self._load()  # what other processes wrote since this one read
            entries[_key(route)] = (ModelInfo(**known), at)
            self._entries = entries
            try:
                self._write(entries)
            except OSError:
                return  # a cache: this process still has it
            self._stamp = self._file_stamp()

    def _file_stamp(self) -> tuple[int, int, int] | None:
        try:
            found = os.stat(self.path)
        except OSError:
            return None
        return found.st_ino, found.st_mtime_ns, found.st_size

    def _load(self) -> dict[str, tuple[ModelInfo, float]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        entries: dict[str, tuple[ModelInfo, float]] = {}
        now = self._now()
        for key, raw in data.items() if isinstance(data, dict) else ():
            entry = _read_entry(raw)
            if entry is not None and now - entry[1] <= MAX_AGE:
                entries[key] = entry
        return entries

    def _write(self, entries: dict[str, tuple[ModelInfo, float]]) -> None:
        directory = self.path.parent
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = {key: {"at": at, "info": _known(info)} for key, (info, at) in entries.items()}
        temporary = directory / f".{FILE}.{os.getpid()}.{threading.get_ident()}"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1, sort_keys=True)
        # Whole or not at all: a reader never sees half a file.
        os.replace(temporary, self.path)


def probed_over(info: ModelInfo, probed: ModelInfo, age: float) -> ModelInfo:
    """``info`` with what a probe said ``age`` seconds ago over it. A plugin's note
    asking for a probe goes once the probe has given the context window; one note says
    where the probed values came from."""
    notes = info.notes
    if probed.context_window is not None:
        notes = [note for note in notes if PROBE_ADVICE not in note]
    merged = replace(probed, notes=[]).merged_over(replace(info, notes=notes))
    said = ", ".join(
        f"{_LABELS.get(name, name.replace('_', ' '))} {_shown(value)}"
        for name, value in _known(probed).items()
    )
    merged.notes.append(
        f"{said}: from a probe of the server {_ago(age)} (kept for {MAX_AGE / 3600:g} h; "
        f"`{PROBE_ADVICE}` asks again)"
    )
    return merged


_LABELS = {"supports_tools": "tools", "supports_images": "images"}


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _ago(seconds: float) -> str:
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min ago"
    return f"{seconds / 3600:.1f} h ago"
