"""``modelplug gateway serve`` runs the app as a plain ASGI app: on uvicorn's own public
classes (uvloop and httptools where installed), or on granian with ``--server granian``
or ``[gateway] server = "granian"`` (one worker on granian's embeddable server, several
as granian's worker processes), and says which extra to install when granian is
missing."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import openai
import pytest
import uvicorn
from modelplug.cli import main
from modelplug_gateway.server import uvicorn_server
from modelplug_gateway.settings import GatewaySettings

HELLO = [{"role": "user", "content": "hello there"}]
SERVE = [sys.executable, "-m", "modelplug", "gateway", "serve"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def environment(tmp_path: Path, config: str = "", **more: str) -> dict[str, str]:
    user = tmp_path / "config.toml"
    user.write_text(config)
    os.chmod(user, 0o600)
    return {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG")} | {
        "MODELPLUG_CONFIG": str(user),
        "MODELPLUG_DATA_DIR": str(tmp_path / "data"),
        "MODELPLUG_PLUGINS": "modelplug-gateway",
        **more,
    }


class Served:
    """``modelplug gateway serve ARGS`` in a process of its own, until ``stop()``."""

    def __init__(self, args: list[str], env: dict[str, str], port: int, cwd: Path) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen(
            [*SERVE, "--port", str(port), *args],
            env=env,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            # Its own process group: a worker left behind is ended with it (below).
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                if httpx2.get(self.url + "/health").status_code == 200:
                    return
            except httpx2.TransportError:
                time.sleep(0.05)
        raise AssertionError(f"the gateway did not start: {self.stop()}")

    def stop(self) -> tuple[int, str]:
        """SIGTERM, then the exit code and what it printed."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        # A worker process that outlived its parent (granian's, on a loaded machine)
        # would hold the output pipe open, and the read below would wait for ever.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        output = self.process.stdout.read().decode() if self.process.stdout else ""
        return code, output


def test_serve_runs_the_app_itself_on_uvicorns_own_server_and_protocol() -> None:
    app = object()
    server = uvicorn_server(app, GatewaySettings(port=4123, shutdown_grace=2.5))
    assert type(server) is uvicorn.Server
    config = server.config
    assert config.app is app
    assert (config.host, config.port, config.timeout_graceful_shutdown) == ("127.0.0.1", 4123, 3)
    assert (config.loop, config.http, config.access_log) == ("auto", "auto", False)
    config.load()
    assert config.http_protocol_class.__module__.startswith("uvicorn.protocols.http.")


def test_server_granian_on_the_command_line_answers_the_openai_sdk(tmp_path: Path) -> None:
    pytest.importorskip("granian")
    port = free_port()
    served = Served(["--no-auth", "--server", "granian"], environment(tmp_path), port, tmp_path)
    try:
        sdk = openai.OpenAI(base_url=served.url + "/v1", api_key="unused", max_retries=0)
        answer = sdk.chat.completions.with_raw_response.create(model="echo", messages=HELLO)
        chunks = list(sdk.chat.completions.create(model="echo", messages=HELLO, stream=True))
    finally:
        code, output = served.stop()
    assert answer.headers["server"] == "granian"
    assert answer.parse().choices[0].message.content == "hello there"
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert streamed == "hello there"
    assert code == 0, output


def test_server_granian_in_the_user_file_runs_two_workers_with_the_key(tmp_path: Path) -> None:
    pytest.importorskip("granian")
    port = free_port()
    env = environment(
        tmp_path, '[gateway]\nserver = "granian"\nworkers = 2\n', MODELPLUG_GATEWAY_KEY="k-1"
    )
    served = Served([], env, port, tmp_path)
    try:
        refused = httpx2.post(served.url + "/v1/chat/completions", json={"model": "echo"})
        sdk = openai.OpenAI(base_url=served.url + "/v1", api_key="k-1", max_retries=0)
        answers = [
            sdk.chat.completions.with_raw_response.create(model="echo", messages=HELLO)
            for _ in range(4)
        ]
    finally:
        code, output = served.stop()
    assert refused.status_code == 401
    assert {a.headers["server"] for a in answers} == {"granian"}
    assert [a.parse().choices[0].message.content for a in answers] == ["hello there"] * 4
    assert output.count("Spawning worker") == 2, output
    assert code == 0, output


def test_a_port_in_use_on_granian_is_one_line_naming_the_address(tmp_path: Path) -> None:
    pytest.importorskip("granian")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*SERVE, "--no-auth", "--port", str(port), "--server", "granian"],
            env=environment(tmp_path),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr  # not granian's Rust backtrace
    assert lines[0].startswith(
        f"modelplug gateway: granian stopped on 127.0.0.1:{port}: Address already in use"
    )


def test_server_granian_without_granian_installed_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in environment(tmp_path).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setitem(sys.modules, "granian", None)  # an import of it fails, as uninstalled
    code = main(["gateway", "serve", "--no-auth", "--server", "granian", "--port", "1"])
    error = capsys.readouterr().err
    assert code == 2
    assert "pip install 'modelplug-gateway[granian]'" in error


def test_an_unknown_server_in_the_user_file_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    env = environment(tmp_path, '[gateway]\nserver = "hypercorn"\n')
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code = main(["gateway", "serve", "--no-auth", "--port", "1"])
    error = capsys.readouterr().err
    assert code == 2
    assert "[gateway] server" in error and "'uvicorn'" in error and "'granian'" in error
