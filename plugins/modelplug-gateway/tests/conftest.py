"""Test helpers: run a gateway app for real (on 127.0.0.1, a free port, in a thread, on
uvicorn or granian as ``serve()`` builds them) over a Client that sees only the plugins
a test gives it.

A test module whose tests should run on both servers overrides the ``server`` fixture
with ``params=["uvicorn", "granian"]`` (the SDK tests do)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from typing import Any

import pytest
from modelplug import Client
from modelplug_gateway.app import Gateway
from modelplug_gateway.auth import OpenGate
from modelplug_gateway.server import granian_server, uvicorn_server
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
def running(app: Any, server: str = "uvicorn", **config: Any) -> Iterator[str]:
    """Serve ``app`` on ``server`` until the block ends; yields its base URL."""
    if server == "granian":
        with _on_granian(app, **config) as url:
            yield url
        return
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config.setdefault("log_level", "warning")
    uvicorn = uvicorn_server(app, GatewaySettings(port=port), **config)
    thread = threading.Thread(target=uvicorn.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uvicorn.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the gateway did not start")
        time.sleep(0.005)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        uvicorn.should_exit = True
        thread.join(10)
        sock.close()


@contextmanager
def _on_granian(app: Any, **config: Any) -> Iterator[str]:
    """granian's embeddable server on its own event loop in a thread (as ``serve()``
    builds it; ``serve()`` runs it on the main thread's loop, with the signals)."""
    pytest.importorskip("granian")
    config.setdefault("log_level", "warning")
    for _ in range(5):  # a free port, taken by another process meanwhile: try another
        port = _free_port()
        server = granian_server(app, GatewaySettings(port=port), **config)
        loop = asyncio.new_event_loop()
        thread = threading.Thread(
            target=loop.run_until_complete, args=(server.serve(),), daemon=True
        )
        thread.start()
        if _listening(port, thread):
            break
        thread.join(10)
        loop.close()
    else:
        raise RuntimeError("the gateway did not start on granian")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        loop.call_soon_threadsafe(server.stop)
        thread.join(10)
        if not thread.is_alive():
            loop.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int, thread: threading.Thread) -> bool:
    deadline = time.monotonic() + 10
    while thread.is_alive() and time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.01)
    return False


@pytest.fixture
def make_gateway() -> Callable[..., Gateway]:
    """``make_gateway(*plugins, client=None, gate=None, **[gateway] options)``."""
    return gateway_app


@pytest.fixture
def server() -> str:
    """The ASGI server ``serve`` runs an app on (a module may run on both)."""
    return "uvicorn"


@pytest.fixture
def serve(server: str) -> Callable[..., AbstractContextManager[str]]:
    """``with serve(app) as url:`` runs ``app`` on ``server`` for the block."""
    return partial(running, server=server)


@pytest.fixture(scope="session")
def serving() -> Callable[..., AbstractContextManager[str]]:
    """:func:`running` for fixtures of a wider scope: ``serving(app, server=...)``."""
    return running
