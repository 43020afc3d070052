"""The kit's timeouts under ``[gemini]``: a wait for the answer's headers ends at
first_byte_timeout, a silence mid-stream at read_timeout (with the output so far), and
each error names the setting that ended it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from modelplug import ConfigError, ModelError
from modelplug.client.client import Client
from modelplug_kit.testing import WireServer

SPEC = "gemini/gemini-2.5-flash"


def fail(client: Client) -> ModelError:
    with pytest.raises(ModelError) as caught:
        list(client.stream(SPEC, "hi"))
    return caught.value


def test_a_stall_before_the_headers_names_first_byte_timeout(
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
    recorded: Callable[[str], Path],
) -> None:
    # The answer would come 30 s later: what ends the call is the timeout the error names.
    wire_server.add_file(recorded("text.sse"), stall=30.0)
    error = fail(gemini_client("[gemini]\nfirst_byte_timeout = 0.5\n"))
    assert (error.error_class.kind, error.error_class.retryable) == ("transient", True)
    assert error.partial is None
    assert str(error).startswith(
        f"gemini at {wire_server.url} sent no answer within 0.5 s (first_byte_timeout in [gemini])"
    )
    # The request went out once: the wait was for its answer, and it was not resent.
    assert len(wire_server.requests) == 1
    wire_server.stopping.set()  # release the server thread waiting out its stall


def test_a_stall_mid_stream_names_read_timeout_and_keeps_the_text(
    gemini_client: Callable[..., Client],
    wire_server: WireServer,
    recorded: Callable[[str], Path],
) -> None:
    sent = wire_server.add_file(recorded("text.sse"))
    sent.chunks[1] = (30.0, sent.chunks[1])  # the last event would come 30 s later
    error = fail(gemini_client("[gemini]\nread_timeout = 0.5\n"))
    assert (error.error_class.kind, error.error_class.retryable) == ("transient", True)
    assert "sent nothing for 0.5 s (read_timeout in [gemini]); the server stalled" in str(error)
    assert error.partial is not None
    assert error.partial.text.startswith("Here you go!") and "Ciao" not in error.partial.text
    wire_server.stopping.set()


@pytest.mark.parametrize(
    "key", ["connect_timeout", "first_byte_timeout", "read_timeout", "write_timeout"]
)
def test_every_timeout_is_checked_and_named(
    gemini_client: Callable[..., Client], wire_server: WireServer, key: str
) -> None:
    with pytest.raises(ConfigError, match=rf"\[gemini\] {key}: must be greater than 0"):
        list(gemini_client(f"[gemini]\n{key} = 0\n").stream(SPEC, "hi"))
    assert wire_server.requests == []
