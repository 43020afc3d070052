"""A deadline name where users put a model: ``modelplug chat -m nightly`` and the
gateway's ``model`` field (the openai SDK), against the recorded Batch API."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from modelplug.cli import main
from modelplug_kit.testing import WireServer

from .conftest import (
    BATCH_ID,
    FAST,
    SLOW,
    TEST_KEY,
    FakeTime,
    MakeDeadlineClient,
    queue_ending_batch,
    queue_fast_answer,
    settings_toml,
)


def test_cli_chat_with_a_deadline_name_answers_from_the_batch(
    modelplug_config_dir: Path,
    wire_server: WireServer,
    fake_time: FakeTime,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    toml = settings_toml(wire_server, 'step_limit = "20m"')
    (modelplug_config_dir / "config.toml").write_text(toml)
    queue_ending_batch(wire_server, in_progress=4)
    code = main(["chat", "-m", "nightly", "--usage", "hi"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == "Batch hello.\n"
    assert BATCH_ID in err  # the batch id and status lines, through the retry line
    assert f"{SLOW}: input 11 output 4" in err


def test_cli_chat_with_a_deadline_name_past_its_switch_answers_from_fast(
    modelplug_config_dir: Path,
    wire_server: WireServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    toml = settings_toml(wire_server, 'switch_at = "2020-01-01T00:00Z"')
    (modelplug_config_dir / "config.toml").write_text(toml)
    queue_fast_answer(wire_server)
    code = main(["chat", "-m", "nightly", "--usage", "hi"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == "Hello, world!\n"
    assert f"{FAST}: input" in err


@contextmanager
def gateway_serving(client: Any) -> Iterator[str]:
    """The gateway over ``client`` on uvicorn in a thread, on a loopback port."""
    from modelplug_gateway.app import Gateway
    from modelplug_gateway.auth import OpenGate
    from modelplug_gateway.server import uvicorn_server
    from modelplug_gateway.settings import GatewaySettings

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = Gateway(client, GatewaySettings(), OpenGate())
    server = uvicorn_server(app, GatewaySettings(port=port), log_level="warning")
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    started = time.monotonic()
    while not server.started:
        if time.monotonic() - started > 30 or not thread.is_alive():
            raise RuntimeError("the gateway did not start")
        time.sleep(0.005)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_gateway_model_field_takes_a_deadline_name(
    deadline_client: MakeDeadlineClient, wire_server: WireServer, fake_time: FakeTime
) -> None:
    pytest.importorskip("modelplug_gateway")
    openai = pytest.importorskip("openai")
    queue_ending_batch(wire_server)
    with gateway_serving(deadline_client('step_limit = "20m"')) as url:
        sdk = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
        raw = sdk.chat.completions.with_raw_response.create(
            model="nightly", messages=[{"role": "user", "content": "hi"}]
        )
    completion = raw.parse()
    assert completion.choices[0].message.content == "Batch hello."
    assert raw.headers["x-modelplug-route"] == SLOW  # the route that answered
    assert completion.usage is not None and completion.usage.completion_tokens == 4
