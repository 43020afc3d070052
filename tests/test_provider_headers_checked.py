"""A provider's ``headers`` in the user's file are checked when the settings are read: a
value with a line break (which would end the header early and let the rest pass as
another header: request splitting) or outside ASCII, or a name that is not an HTTP
token, is a ConfigError naming the provider and the header, never its value (often a
key). Before, the first was sent and failed as a transient error that was retried, and
the second ended in a UnicodeEncodeError."""

from __future__ import annotations

import pytest
from modelplug import Client
from modelplug.contract.errors import ConfigError
from modelplug_kit.testing import WireServer

SECRET = "sk-team-secret-0123456789"
OK = [{"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}]


def client_with(wire_server: WireServer, headers: dict[str, str]) -> Client:
    config = {
        "providers": {
            "wire": {
                "type": "openai-compatible",
                "base_url": wire_server.url + "/v1",
                "headers": headers,
            }
        }
    }
    return Client(
        config=config,
        enable=["modelplug-openai-compat"],
        user_config="/nonexistent/modelplug.toml",
        environ={},
    )


@pytest.mark.parametrize(
    "value",
    [f"{SECRET}\r\nx-injected: 1", f"{SECRET}\nmore", f"café {SECRET}", f"{SECRET}\x00"],
    ids=["crlf", "lf", "non-ascii", "nul"],
)
def test_a_header_value_an_http_request_cannot_carry_is_refused_naming_the_header(
    wire_server: WireServer, value: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        client_with(wire_server, {"x-team": value}).complete("wire/m", "hi")
    message = str(caught.value)
    assert "header 'x-team' of provider 'wire'" in message and "one line in ASCII" in message
    assert SECRET not in message
    assert wire_server.requests == []  # nothing was sent


def test_a_header_name_that_is_not_a_token_is_refused(wire_server: WireServer) -> None:
    with pytest.raises(ConfigError, match="'x team' of provider 'wire' is not a valid"):
        client_with(wire_server, {"x team": "1"}).complete("wire/m", "hi")


def test_a_plain_header_is_sent(wire_server: WireServer) -> None:
    wire_server.add_sse(OK, done=True)
    answer = client_with(wire_server, {"x-team": "blue\tteam"}).complete("wire/m", "hi")
    assert answer.text == "ok"
    assert wire_server.requests[-1].headers["x-team"] == "blue\tteam"
