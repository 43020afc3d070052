"""Tools sent to a model that cannot call them: before the call, core says so (a Notice,
logged by complete() when nobody listens) with what to do, then sends as usual."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from modelplug import Client
from modelplug.contract.types import Notice, ToolSpec
from modelplug_kit.testing import WireServer

RECORDING = Path(__file__).parent / "recordings" / "chat_text.sse"
TOOLS = [ToolSpec(name="get_weather"), ToolSpec(name="get_time")]
# llama.cpp's GET /props, trimmed to the fields the probe reads (the server's names;
# values invented: a chat template without tool support).
PROPS = {
    "default_generation_settings": {"n_ctx": 8192},
    "chat_template_caps": {"supports_tools": False},
}


def client_for(make_client, wire_server: WireServer, **model: object) -> Client:
    config: dict[str, object] = {
        "providers": {
            "llamacpp": {"type": "openai-compatible", "base_url": wire_server.url + "/v1"}
        }
    }
    if model:
        config["models"] = {"llamacpp/any": model}
    return make_client("modelplug-openai-compat", config=config)


def call(client: Client, **fields: object) -> tuple[list[Notice], str]:
    notices: list[Notice] = []
    response = client.complete(
        "llamacpp/any", "weather in Oslo?", on_event=notices.append, **fields
    )
    return [n for n in notices if isinstance(n, Notice)], response.text


def test_a_probe_that_says_no_tools_gets_a_notice_naming_the_fixes_then_the_call(
    make_client, wire_server: WireServer
) -> None:
    wire_server.add_json(PROPS, path="/props")
    wire_server.add_file(RECORDING)
    client = client_for(make_client, wire_server)
    client.probe("llamacpp/any")
    notices, text = call(client, tools=TOOLS)
    [notice] = notices
    assert notice.kind == "tools_unsupported"
    message = notice.message
    assert message.startswith("llamacpp/any cannot call tools (a probe of the server said so")
    assert "`modelplug resolve --probe llamacpp/any` asks again" in message
    assert "the 2 tools of this request will not be called" in message
    assert "--jinja" in message  # how llama-server calls tools
    assert 'text_tool_calls = "lines" under [models."llamacpp/any"]' in message
    assert "supports_tools = true" in message
    assert notice.details["tools"] == ["get_weather", "get_time"]
    # Sent as usual, tools included; the server's plain text is the answer.
    body = wire_server.requests[-1].json()
    assert [t["function"]["name"] for t in body["tools"]] == ["get_weather", "get_time"]
    assert text.startswith("Still ")


def test_supports_tools_false_in_the_settings_is_named_as_the_reason(
    make_client, wire_server: WireServer
) -> None:
    wire_server.add_file(RECORDING)
    notices, _ = call(client_for(make_client, wire_server, supports_tools=False), tools=TOOLS)
    assert [n.kind for n in notices] == ["tools_unsupported"]
    assert "(your settings say supports_tools = false)" in notices[0].message


def test_complete_without_a_listener_logs_the_notice_once(
    make_client, wire_server: WireServer, caplog: pytest.LogCaptureFixture
) -> None:
    wire_server.add_file(RECORDING)
    client = client_for(make_client, wire_server, supports_tools=False)
    with caplog.at_level(logging.WARNING, logger="modelplug"):
        client.complete("llamacpp/any", "weather?", tools=TOOLS)
    said = [r for r in caplog.records if "cannot call tools" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        ({"supports_tools": False}, {"tool_choice": "none"}),  # no tool will be asked for
        ({"supports_tools": False, "text_tool_calls": "lines"}, {}),  # calls come as text
        ({}, {}),  # nothing says the model cannot
        ({"supports_tools": True}, {}),
    ],
)
def test_no_notice_where_the_tools_are_not_expected_as_calls_or_may_work(
    make_client, wire_server: WireServer, model: dict[str, object], fields: dict[str, object]
) -> None:
    wire_server.add_file(RECORDING)
    notices, _ = call(client_for(make_client, wire_server, **model), tools=TOOLS, **fields)
    assert [n.kind for n in notices if n.kind == "tools_unsupported"] == []


def test_a_request_without_tools_gets_no_notice(make_client, wire_server: WireServer) -> None:
    wire_server.add_file(RECORDING)
    notices, _ = call(client_for(make_client, wire_server, supports_tools=False))
    assert notices == []
