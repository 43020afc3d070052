"""Shared helpers: a Client whose ``ollama`` provider points at the loopback WireServer,
and the recorded NDJSON streams served one line per chunk."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from modelplug import Client
from modelplug.testing import calm_hypothesis
from modelplug_kit.testing import WireServer, load_recording

RECORDED = Path(__file__).parent / "recorded"
PLUGIN = "modelplug-ollama"


def recorded(name: str) -> bytes:
    """A recording's bytes without its leading comment line."""
    return load_recording(RECORDED / name)


def lines_of(data: bytes) -> list[bytes]:
    """NDJSON bytes cut after each newline (one chunk per line, as Ollama flushes)."""
    chunks = data.splitlines(keepends=True)
    return chunks or [b""]


class Wire:
    """The wire server with Ollama's shapes: recorded streams one line per chunk, lines
    made by a test, recorded JSON answers. (Tests reach these through the ``wire``
    fixture: with importlib imports, a conftest is not importable by name.)"""

    def __init__(self, server: WireServer) -> None:
        self.server = server
        self.requests = server.requests

    def recorded(self, name: str) -> bytes:
        return recorded(name)

    def recorded_json(self, name: str) -> Any:
        return json.loads(recorded(name))

    def chat(self, name: str, **kwargs: Any) -> None:
        """Queue a recorded /api/chat stream, one line per chunk."""
        self.server.add(
            lines_of(recorded(name)),
            path="/api/chat",
            content_type="application/x-ndjson",
            **kwargs,
        )

    def lines(self, lines: list[dict[str, Any] | str], **kwargs: Any) -> None:
        """Queue a stream made of these lines (dicts are JSON-encoded)."""
        chunks = [(json.dumps(x) if isinstance(x, dict) else x).encode() + b"\n" for x in lines]
        self.server.add(chunks, path="/api/chat", content_type="application/x-ndjson", **kwargs)

    def answer(self, name: str, path: str, **kwargs: Any) -> None:
        """Queue a recorded JSON answer for ``path`` (/api/show, /api/ps)."""
        self.server.add(recorded(name), path=path, content_type="application/json", **kwargs)


@pytest.fixture
def wire(wire_server: WireServer) -> Wire:
    return Wire(wire_server)


@pytest.fixture
def ollama(make_client: Callable[..., Client], wire_server: WireServer) -> Callable[..., Client]:
    """``ollama(extra_config=None, *plugins, probe=False, environ=None, **provider)``: a
    Client with only this plugin (and core's built-ins), its ``ollama`` provider
    pointing at ``wire_server``. The automatic /api/show is off unless asked for."""

    def make(
        extra: dict[str, Any] | None = None,
        *plugins: object,
        probe: bool = False,
        environ: dict[str, str] | None = None,
        **provider: Any,
    ) -> Client:
        entry = {"type": "ollama", "base_url": wire_server.url, **provider}
        config: dict[str, Any] = {"providers": {"ollama": entry}, "ollama": {"probe": probe}}
        for key, value in (extra or {}).items():
            if isinstance(value, dict) and isinstance(config.get(key), dict):
                config[key] = {**config[key], **value}
            else:
                config[key] = value
        # Loaded through its entry point (the allow-list keeps other installed plugins
        # out), so the plugin's settings section [ollama] is recognised.
        return make_client(
            PLUGIN, *plugins, entry_points=True, config=config, environ=environ or {}
        )

    return make


@pytest.fixture(scope="module")
def _module_wire_server() -> Iterator[WireServer]:
    server = WireServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def wire_server(_module_wire_server: WireServer) -> WireServer:
    """The test kit's WireServer, shared by a module's tests (stopping one costs half a
    second), handed on idle and emptied before each test (``WireServer.hand_on``)."""
    return _module_wire_server.hand_on()


# No timing checks in property tests: a busy machine must not fail them by chance.
calm_hypothesis()
