"""A real redis-server for the key tests (the approach of modelplug-redis's conftest):
started on a free loopback port with its own temporary directory, stopped after.
Without redis-server the tests skip, unless the environment variable CI is set: then a
missing redis-server fails the run. Test modules import the fixtures from here."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One redis-server process: ``url``, ``kill()`` (SIGKILL, as a crash) and
    ``start()`` again on the same port and directory."""

    def __init__(self, executable: str, directory: Path) -> None:
        self.executable = executable
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.executable,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--dir", str(self.directory),
                "--save", "",
                "--appendonly", "no",
                "--daemonize", "no",
                "--loglevel", "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while not ping(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.02)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
            self.process = None


def redis_executable() -> str:
    found = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None
    )
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(
                "redis-server is not installed and CI is set (apt-get install redis-server)"
            )
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    return found


@pytest.fixture
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(redis_executable(), tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_config(redis_server: RedisServer) -> dict[str, object]:
    """Settings that point the stores at the test server. The timeout is one only a hang
    reaches: on a busy machine a slow answer would otherwise count as Redis down, and the
    store would go on in this process's memory. A test that means Redis down kills it,
    and a killed server refuses at once."""
    return {"redis": {"url": redis_server.url, "timeout": 5.0, "retry_interval": 0.0}}
