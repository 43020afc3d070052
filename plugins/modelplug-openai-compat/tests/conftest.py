"""Shared helpers: a Client whose provider ``wire`` points at the loopback WireServer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from modelplug import Client
from modelplug.testing import calm_hypothesis
from modelplug_kit.testing import WireServer

RECORDINGS = Path(__file__).parent / "recordings"
PLUGIN = "modelplug-openai-compat"


def wire_config(wire: WireServer, /, name: str = "wire", **provider: Any) -> dict[str, Any]:
    entry = {"type": "openai-compatible", "base_url": wire.url + "/v1", **provider}
    return {"providers": {name: entry}}


@pytest.fixture
def compat(make_client: Callable[..., Client], wire_server: WireServer) -> Callable[..., Client]:
    """``compat(extra_config=None, name="wire", **provider)``: a Client with only this
    plugin (and core's built-ins), its provider pointing at ``wire_server``."""

    def make(
        extra: dict[str, Any] | None = None,
        *plugins: object,
        name: str = "wire",
        environ: dict[str, str] | None = None,
        **provider: Any,
    ) -> Client:
        config = wire_config(wire_server, name, **provider)
        config.update(extra or {})
        # Loaded through its entry point (the allow-list keeps other installed plugins
        # out), so the plugin's settings section [openai-compat] is recognised.
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
    second), handed on idle and emptied before each test."""
    return _module_wire_server.hand_on()


# No timing checks in property tests: a busy machine must not fail them by chance.
calm_hypothesis()
