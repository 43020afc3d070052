"""A provider key the gateway lacks is the operator's to set, not the caller's fault and
not something a retry fixes: a 500 with ``x-should-retry: false`` (the SDKs send it
once, not three times) whose message names the setting for the operator, written to
the gateway's log as well; never a key's value."""

from __future__ import annotations

import logging
from typing import Any

import anthropic
import openai
import pytest
from modelplug import Client
from modelplug_gateway.app import Gateway
from modelplug_gateway.auth import OpenGate
from modelplug_gateway.settings import GatewaySettings

HELLO = [{"role": "user", "content": "hi"}]
MODEL = "anthropic/claude-sonnet-4-6"


@pytest.fixture
def keyless(make_client: Any, monkeypatch: pytest.MonkeyPatch) -> Gateway:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-a-key-that-must-never-show-0123456789")
    client: Client = make_client("modelplug-anthropic")
    return Gateway(client, GatewaySettings(), OpenGate())


def test_the_openai_sdk_sends_it_once_and_reads_which_setting_is_missing(
    keyless: Gateway, serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="modelplug.gateway")
    with serve(keyless) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="k")  # the SDK's 2 retries
        with pytest.raises(openai.InternalServerError) as plain:
            client.chat.completions.create(model=MODEL, messages=HELLO)
        with pytest.raises(openai.InternalServerError) as streamed:
            client.chat.completions.create(model=MODEL, messages=HELLO, stream=True)
    for raised in (plain, streamed):
        error = raised.value
        assert error.status_code == 500
        assert error.response.headers["x-should-retry"] == "false"
        assert error.code == "gateway_misconfigured"
        assert "ANTHROPIC_API_KEY" in error.message and "operator" in error.message
        assert "sk-a-key" not in error.response.text
    assert keyless.metrics.requests[("chat", "none", "5xx")] == 2  # one request per call
    warned = [r.getMessage() for r in caplog.records if r.name == "modelplug.gateway"]
    assert len(warned) == 1 and "ANTHROPIC_API_KEY" in warned[0]  # once, for the operator


def test_the_anthropic_sdk_sends_it_once_and_reads_which_setting_is_missing(
    keyless: Gateway, serve: Any
) -> None:
    with serve(keyless) as url:
        client = anthropic.Anthropic(base_url=url, api_key="k")  # the SDK's 2 retries
        with pytest.raises(anthropic.InternalServerError) as raised:
            client.messages.create(model=MODEL, max_tokens=16, messages=HELLO)
    error = raised.value
    assert error.status_code == 500
    assert error.response.headers["x-should-retry"] == "false"
    assert error.body["error"]["type"] == "api_error"  # type: ignore[index]
    assert "set ANTHROPIC_API_KEY where the gateway runs" in error.message
    assert keyless.metrics.requests[("messages", "none", "5xx")] == 1
