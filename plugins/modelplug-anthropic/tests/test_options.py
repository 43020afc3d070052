"""The ``[anthropic]`` options: timeouts and caching are settings, read with the kit's
read_options (a wrong value is a ConfigError naming the key, an unknown key a warning)."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from modelplug import Client, ConfigError, ModelError, ModelplugWarning
from modelplug_anthropic import sdk as sdk_module
from modelplug_anthropic.options import Options
from modelplug_kit.testing import WireServer

MakeClient = Callable[..., Client]
Recording = Callable[[str], Path]


def test_default_options_allow_long_silent_thinking() -> None:
    options = Options()
    assert options.cache is True
    assert options.first_byte_timeout == 600
    assert options.read_timeout >= 20 * 60
    assert options.connect_timeout == 10
    # The kit's names, with room for a long prompt over a slow link.
    assert options.write_timeout == 600


def test_modelplug_stream_first_byte_timeout_is_a_setting(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("text.sse"), stall=2.0)
    client = claude_client("\n[anthropic]\nfirst_byte_timeout = 0.2\n")
    with pytest.raises(ModelError) as caught:
        client.complete("anthropic/claude-sonnet-4-6", "hi")
    assert caught.value.kind == "transient"
    assert caught.value.retryable
    assert "sent no answer within 0.2 s" in str(caught.value)
    assert "first_byte_timeout" in str(caught.value)


def test_modelplug_stream_read_timeout_is_a_setting_and_keeps_partial(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    data = recording("text.sse").read_bytes().split(b"\n", 1)[1]
    cut = data.index(b"event: content_block_delta", data.index(b"Hello"))
    wire_server.add([data[:cut], (3.0, data[cut:])])
    client = claude_client("\n[anthropic]\nread_timeout = 0.3\n")
    with pytest.raises(ModelError) as caught:
        client.complete("anthropic/claude-sonnet-4-6", "hi")
    error = caught.value
    assert error.kind == "transient" and error.retryable
    assert "read_timeout in [anthropic]" in str(error)
    assert error.partial is not None
    assert error.partial.text == "Hello"


def test_sdk_client_takes_its_timeouts_from_the_settings(
    claude_client: MakeClient, wire_server: WireServer
) -> None:
    client = claude_client("\n[anthropic]\nread_timeout = 7\nconnect_timeout = 3\n")
    route = client.resolve("anthropic/claude-opus-5")

    async def build() -> tuple[float, float]:
        try:
            sdk, options = sdk_module.sdk_client(route, client, "sk-ant-unused-key")
            assert options.read_timeout == 7.0
            return sdk.timeout.read, sdk.timeout.connect
        finally:
            await client.aclose()

    assert asyncio.run(build()) == (7.0, 3.0)


def test_an_unknown_option_is_a_warning_naming_the_known_ones(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("text.sse"))
    client = claude_client("\n[anthropic]\nread_timout = 1\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert client.complete("anthropic/claude-sonnet-4-6", "hi").text == "Hello, world!"
    messages = [str(w.message) for w in caught if issubclass(w.category, ModelplugWarning)]
    unknown = [m for m in messages if "read_timout" in m]
    assert unknown, messages
    assert "read_timeout" in unknown[0] and "first_byte_timeout" in unknown[0]


@pytest.mark.parametrize(
    ("line", "key"),
    [("read_timeout = 0", "read_timeout"), ('first_byte_timeout = "soon"', "first_byte_timeout")],
)
def test_a_wrong_option_value_is_a_config_error_naming_the_key(
    claude_client: MakeClient, wire_server: WireServer, line: str, key: str
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client = claude_client(f"\n[anthropic]\n{line}\n")
    with pytest.raises(ConfigError, match=rf"\[anthropic\] {key}"):
        client.complete("anthropic/claude-sonnet-4-6", "hi")
    assert wire_server.requests == []
