"""The kit's pytest fixtures (registered through ``pytest11``): ``wire_server``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from modelplug_kit.testing.wire_server import WireServer


@pytest.fixture
def wire_server() -> Iterator[WireServer]:
    """A started loopback WireServer, stopped after the test."""
    server = WireServer().start()
    try:
        yield server
    finally:
        server.stop()
