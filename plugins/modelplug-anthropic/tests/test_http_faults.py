"""What the kit's HTTP path gives the Messages stream: nothing listening names the base
URL, a dead keep-alive connection is resent once in silence, an error status is read
from Anthropic's error body, one connection serves call after call, and the SDK is not
imported to stream at all. Error bodies are the Messages API errors page's shape."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import modelplug_anthropic
import pytest
from modelplug import Client, ModelError
from modelplug.contract.types import Notice, TextDelta
from modelplug_anthropic.errors import StatusError
from modelplug_anthropic.http import messages_url
from modelplug_kit.testing import WireServer, load_recording, refused_url

MakeClient = Callable[..., Client]
Recording = Callable[[str], Path]
SPEC = "anthropic/claude-sonnet-4-6"


def failure(client: Client, spec: str = SPEC) -> ModelError:
    with pytest.raises(ModelError) as caught:
        client.complete(spec, "hi")
    return caught.value


def test_a_refused_connection_names_the_base_url(
    make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
    base = refused_url() + "/anthropic"
    client = make_client(
        modelplug_anthropic,
        config={"providers": {"box": {"type": "anthropic", "base_url": base}}},
    )
    error = failure(client, "box/claude-sonnet-4-6")
    assert f"Cannot reach box at {base}. Is the server running?" in str(error)
    assert error.kind == "unreachable"
    assert not error.retryable and error.error_class.fallback


def test_the_built_in_url_is_anthropics(make_client: MakeClient) -> None:
    route = make_client(modelplug_anthropic).resolve(SPEC)
    assert route.endpoint.base_url is None
    assert messages_url(route) == "https://api.anthropic.com/v1/messages"


def test_a_dead_keep_alive_connection_is_sent_again_once_without_a_notice(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    # The server read the request and closed the connection without a byte of answer.
    wire_server.add(b"", hang_up=True)
    wire_server.add_file(recording("text.sse"))
    events = list(claude_client().stream(SPEC, "hi"))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello", ", world!"]
    assert not [e for e in events if isinstance(e, Notice)]
    first, second = wire_server.requests
    assert first.body == second.body
    assert wire_server.connections == 2


def test_a_second_hang_up_is_a_transient_error_not_a_third_try(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add(b"", hang_up=True)
    wire_server.add(b"", hang_up=True)
    wire_server.add_file(recording("text.sse"))
    error = failure(claude_client())
    assert error.kind == "transient" and error.retryable
    assert len(wire_server.requests) == 2
    assert wire_server.pending == 1


def test_back_to_back_calls_use_one_connection(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("text.sse"))
    wire_server.add_file(recording("tool_use.sse"))
    wire_server.add_file(recording("thinking.sse"))
    client = claude_client()
    assert client.complete(SPEC, "hi").text == "Hello, world!"
    assert client.complete(SPEC, "weather?").stop_reason == "tool_use"
    assert client.complete("anthropic/claude-opus-5", "2+2?").usage.reasoning == 45
    assert len(wire_server.requests) == 3
    # Each stream was read past message_stop to its end, so its connection was kept.
    assert wire_server.connections == 1
    assert [r.connection for r in wire_server.requests] == [1, 1, 1]


def test_bytes_after_message_stop_are_drained_and_the_connection_kept(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    # A gateway that sends more after message_stop (a comment, a stray event): it is
    # read and dropped, never parsed, and the connection still serves the next call.
    data = load_recording(recording("text.sse"))
    wire_server.add([data, b": keep-alive\n\n", b"data: not json at all\n\n"])
    wire_server.add_file(recording("text.sse"))
    client = claude_client()
    assert client.complete(SPEC, "hi").text == "Hello, world!"
    assert client.complete(SPEC, "hi").text == "Hello, world!"
    assert wire_server.connections == 1


def test_529_overloaded_reads_anthropics_error_body_retry_after_and_request_id(
    claude_client: MakeClient, wire_server: WireServer
) -> None:
    wire_server.add_json(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        status=529,
        headers={"retry-after": "30", "request-id": "req_018EeWyXxfu5pfWkrYcMdjWG"},
    )
    error = failure(claude_client())
    assert isinstance(error, StatusError)
    assert (error.kind, error.retryable, error.error_class.fallback) == ("overloaded", True, True)
    assert error.error_class.retry_after == 30
    assert error.error_class.reason == "Anthropic is overloaded"
    assert error.status_code == 529
    assert error.request_id == "req_018EeWyXxfu5pfWkrYcMdjWG"
    assert "anthropic answered 529: Overloaded (overloaded_error); retry after 30 s" in str(error)
    assert "request-id req_018EeWyXxfu5pfWkrYcMdjWG" in str(error)
    assert len(wire_server.requests) == 1


def test_a_key_echoed_in_an_error_body_is_never_shown(
    claude_client: MakeClient, wire_server: WireServer, planted_key: str
) -> None:
    wire_server.add_json(
        {
            "type": "error",
            "error": {"type": "authentication_error", "message": f"invalid key {planted_key}"},
        },
        status=401,
        headers={"x-echo": planted_key},
    )
    error = failure(claude_client(key_env="PLANTED_API_KEY"))
    assert isinstance(error, StatusError)
    assert error.kind == "auth"
    assert "invalid key" in str(error)
    for shown in (str(error), repr(error), repr(error.body), repr(error.headers)):
        assert planted_key not in shown


def test_an_html_200_is_refused_at_once_and_not_retried(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording
) -> None:
    wire_server.add_file(recording("login_portal.html"), content_type="text/html")
    error = failure(claude_client())
    assert error.kind == "other" and error.error_class.status == 200
    assert not error.retryable and error.error_class.fallback
    assert "answered text/html, not an event stream" in str(error)
    assert len(wire_server.requests) == 1


def test_streaming_does_not_import_the_sdk(tmp_path: Path, recording: Recording) -> None:
    code = f"""
import sys
from pathlib import Path
import modelplug_anthropic
from modelplug.client.client import Client
from modelplug_kit.testing import WireServer

with WireServer() as server:
    server.add_file({str(recording("text.sse"))!r})
    config = Path({str(tmp_path / "config.toml")!r})
    config.write_text(
        '[providers.anthropic]\\ntype = "anthropic"\\nbase_url = "' + server.url + '"\\n'
    )
    client = Client(plugins=[modelplug_anthropic], entry_points=False, user_config=config)
    print(client.complete("anthropic/claude-sonnet-4-6", "hi").text)
    client.close()
print(sorted(m for m in ("anthropic", "httpx2") if m in sys.modules))
"""
    env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "sk-ant-test-0123456789abcdef"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=tmp_path,
        env=env,
    ).stdout.splitlines()
    assert out == ["Hello, world!", "['httpx2']"]
