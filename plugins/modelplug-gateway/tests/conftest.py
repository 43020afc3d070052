"""Test helpers: run a gateway app for real (uvicorn on 127.0.0.1, a free port, in a
thread) over a Client that sees only the plugins a test gives it."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import pytest
import uvicorn
from modelplug import Client
from modelplug_gateway.app import Gateway
from modelplug_gateway.auth import OpenGate
from modelplug_gateway.corked import PROTOCOL
from modelplug_gateway.settings import GatewaySettings


def gateway_app(
    *plugins: object, client: Client | None = None, gate: Any = None, **options: Any
) -> Gateway:
    """A Gateway over a Client that sees only ``plugins`` and core's built-ins (echo),
    with no user or project file."""
    if client is None:
        client = Client(
            plugins=list(plugins),
            user_config="/nonexistent/modelplug.toml",
            project_dir="/",
            environ={},
            entry_points=False,
        )
    return Gateway(client, GatewaySettings(**options), gate or OpenGate())


@contextmanager
def running(app: Gateway, **config: Any) -> Iterator[str]:
    """Serve ``app`` until the block ends; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config.setdefault("http", PROTOCOL)  # as serve() deploys it
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", **config)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the gateway did not start")
        time.sleep(0.005)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture
def make_gateway() -> Callable[..., Gateway]:
    """``make_gateway(*plugins, client=None, gate=None, **[gateway] options)``."""
    return gateway_app


@pytest.fixture
def serve() -> Callable[..., AbstractContextManager[str]]:
    """``with serve(app) as url:`` runs ``app`` on uvicorn for the block."""
    return running
