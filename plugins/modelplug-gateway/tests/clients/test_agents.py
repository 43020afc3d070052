"""Claude Code and Codex, the real programs, through the gateway (``tox -e clients``).

The tox env installs both from npm at the pinned versions docs/gateway.md names and sets
``MODELPLUG_CLIENTS_BIN`` to their ``node_modules/.bin``; without it every test here is
skipped, so the ordinary test run needs no node. For each upstream type (Anthropic
Messages, OpenAI-compatible Chat Completions, OpenAI Responses) a loopback upstream serves
the provider plugins' recorded answers, ``modelplug gateway serve`` runs in its own
process in front of it with a gateway key, and each agent is run once, pointed at the
gateway by the settings docs/gateway.md gives and nothing else: it must finish and
print the recorded answer's text.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from modelplug_kit.testing import WireServer

AGENTS_BIN = os.environ.get("MODELPLUG_CLIENTS_BIN", "")
pytestmark = pytest.mark.skipif(
    not AGENTS_BIN,
    reason="opt-in: `tox -e clients` installs Claude Code and Codex and sets MODELPLUG_CLIENTS_BIN",
)

RECORDINGS = Path(__file__).parent.parent / "recordings"
GATEWAY_KEY = "sk-clients-test-gateway-key"
# How many answers of each kind are queued for one agent run: an agent retries a failed
# call a few times, and a run must not take the next one's answers.
ANSWERS = 6

# provider type -> (the plugin, the path under the upstream's URL its base_url adds,
# the upstream path called, the recording served, the text it spells)
UPSTREAMS = {
    "anthropic": (
        "modelplug-anthropic",
        "",
        "/v1/messages",
        "anthropic_text.sse",
        "Hello, world!",
    ),
    "openai-compatible": (
        "modelplug-openai-compat",
        "/v1",
        "/v1/chat/completions",
        "openai_compat_text.sse",
        "Sockets wait in silence — café ☕",
    ),
    "openai-responses": (
        "modelplug-openai",
        "/v1",
        "/v1/responses",
        "openai_responses_text.sse",
        None,  # read from the recording (see recorded_text)
    ),
}


# The provider's name in the gateway's settings: on the Anthropic upstream it is
# ``anthropic``, so Claude Code's own default model (a bare Claude id) reaches it with no
# model setting at all; on the others a spec names it.
PROVIDER = {"anthropic": "anthropic", "openai-compatible": "up", "openai-responses": "up"}


def recorded_text(kind: str) -> str:
    text = UPSTREAMS[kind][4]
    if text is not None:
        return text
    import json

    # The Responses recording's text: its output_text.done event.
    for line in (RECORDINGS / UPSTREAMS[kind][3]).read_text().splitlines():
        if line.startswith("data:") and '"response.output_text.done"' in line:
            return str(json.loads(line[5:])["text"])
    raise AssertionError("the Responses recording has no output_text.done event")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Gateway:
    """``modelplug gateway serve`` in its own process, in front of ``upstream``."""

    def __init__(self, kind: str, upstream: WireServer, home: Path) -> None:
        _, base_path, *_ = UPSTREAMS[kind]
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = home / "modelplug.toml"
        config.write_text(
            f'[providers.{PROVIDER[kind]}]\ntype = "{kind}"\n'
            f'base_url = "{upstream.url}{base_path}"\napi_key = "sk-upstream-unused"\n'
        )
        environ = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "MODELPLUG_CONFIG": str(config),
            "MODELPLUG_DATA_DIR": str(home / "data"),
            "MODELPLUG_GATEWAY_KEY": GATEWAY_KEY,
        }
        command = Path(sys.executable).parent / "modelplug"
        self.log = (home / "gateway.log").open("w")
        self.process = subprocess.Popen(
            [str(command), "gateway", "serve", "--port", str(self.port)],
            env=environ,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self._wait_listening()

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"the gateway did not start: see {self.log.name}")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


@pytest.fixture(params=list(UPSTREAMS))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def upstream(kind: str) -> Iterator[WireServer]:
    _, _, path, recording, _ = UPSTREAMS[kind]
    with WireServer() as server:
        for _ in range(ANSWERS):
            server.add_file(RECORDINGS / recording, path=path, content_type="text/event-stream")
        yield server


@pytest.fixture
def gateway(kind: str, upstream: WireServer, tmp_path: Path) -> Iterator[Gateway]:
    running = Gateway(kind, upstream, tmp_path)
    try:
        yield running
    finally:
        running.stop()


def run(command: list[str], environ: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        env={"PATH": os.environ["PATH"], **environ},
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )


def refused(gateway: Gateway) -> list[str]:
    """The request log lines of calls the gateway answered with an error: an agent that
    gets there in the end after a 400 (Claude Code retries without its betas) still
    fails here."""
    lines = Path(gateway.log.name).read_text().splitlines()
    return [line for line in lines if '"status":4' in line or '"status":5' in line]


def explain(result: subprocess.CompletedProcess[str], gateway: Gateway) -> str:
    log = Path(gateway.log.name).read_text()[-4000:]
    return f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}\ngateway log:\n{log}"


def test_claude_code_says_hello_through_the_gateway(
    kind: str, gateway: Gateway, upstream: WireServer, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    result = run(
        [str(Path(AGENTS_BIN) / "claude"), "-p", "say hello"],
        {
            "HOME": str(tmp_path / "claude-home"),
            "ANTHROPIC_BASE_URL": gateway.url,
            "ANTHROPIC_AUTH_TOKEN": GATEWAY_KEY,
            **({} if kind == "anthropic" else {"ANTHROPIC_MODEL": "up/some-model"}),
        },
        work,
    )
    assert result.returncode == 0, explain(result, gateway)
    assert recorded_text(kind) in result.stdout, explain(result, gateway)
    assert upstream.requests, "the agent's prompt never reached the upstream"
    assert refused(gateway) == []
    if kind == "anthropic":  # its own default model, named by nothing but itself
        assert upstream.requests[-1].json()["model"].startswith("claude-")


def test_codex_says_hello_through_the_gateway(
    kind: str, gateway: Gateway, upstream: WireServer, tmp_path: Path
) -> None:
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        f'model = "{PROVIDER[kind]}/some-model"\n'
        'model_provider = "modelplug"\n\n'
        "[model_providers.modelplug]\n"
        'name = "modelplug gateway"\n'
        f'base_url = "{gateway.url}/v1"\n'
        'env_key = "MODELPLUG_GATEWAY_KEY"\n'
        'wire_api = "responses"\n'
    )
    work = tmp_path / "work"
    work.mkdir()
    result = run(
        [str(Path(AGENTS_BIN) / "codex"), "exec", "--skip-git-repo-check", "say hello"],
        {
            "HOME": str(tmp_path / "home"),
            "CODEX_HOME": str(codex_home),
            "MODELPLUG_GATEWAY_KEY": GATEWAY_KEY,
        },
        work,
    )
    assert result.returncode == 0, explain(result, gateway)
    assert recorded_text(kind) in result.stdout, explain(result, gateway)
    assert upstream.requests, "the agent's prompt never reached the upstream"
    assert refused(gateway) == []
