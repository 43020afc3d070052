"""End to end: the installed plugins working together through one Client, on a real
loopback server, with a planted key that must never leak."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from modelplug.cli import main
from modelplug.client.client import Client
from modelplug.contract.errors import ModelError
from modelplug.contract.types import Done, Notice, TextDelta, ToolResultBlock, ToolSpec
from modelplug_kit.testing import WireServer

pytest.importorskip("modelplug_openai_compat")
pytest.importorskip("modelplug_textcalls")
pytest.importorskip("modelplug_fallback")
pytest.importorskip("modelplug_prices")

RECORDINGS = Path(__file__).parent / "recordings"
WEATHER = ToolSpec(
    name="weather",
    description="Current weather for a city",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)
PLUGINS = ["openai-compat", "anthropic", "textcalls", "prices", "fallback"]


@pytest.fixture
def lab(modelplug_config_dir: Path, wire_server: WireServer, planted_key: str) -> Path:
    """The user's own file defines a provider on the loopback server, keyed by the
    planted key; the model writes tool calls as text on their own lines."""
    config = modelplug_config_dir / "config.toml"
    config.write_text(
        f"""
[providers.lab]
type = "openai-compatible"
base_url = "{wire_server.url}/v1"
api_key_env = "PLANTED_API_KEY"

[models."lab/qwen2.5-coder:7b"]
text_tool_calls = "lines"
context_window = 32768
price = {{ input = 0.5, output = 1.5 }}

[fallbacks]
"lab/qwen2.5-coder:7b" = ["lab/backup"]
"""
    )
    return config


def test_every_first_wave_plugin_is_installed_and_enabled(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plugins", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    for short in PLUGINS:
        row = rows[f"modelplug-{short}"]
        assert row["enabled"] is True, row
        assert row["source"] == "entry point"
        assert row["error"] is None
    assert "modelplug_stream" in rows["modelplug-fallback"]["hooks"]
    assert rows["modelplug-textcalls"]["hooks"] == ["modelplug_parse_text_tool_calls"]


def test_a_tool_turn_through_text_calls_with_cost(
    lab: Path, wire_server: WireServer, planted_key: str
) -> None:
    wire_server.add_file(RECORDINGS / "lab_text_call.sse")
    wire_server.add_file(RECORDINGS / "lab_answer.sse")
    client = Client()
    shown: list[str] = []
    first = None
    for event in client.stream("lab/qwen2.5-coder:7b", "Weather in Paris?", tools=[WEATHER]):
        if isinstance(event, TextDelta):
            shown.append(event.text)
        elif isinstance(event, Done):
            first = event.response
    assert first is not None
    # The prose was shown; the call's JSON never was.
    assert "".join(shown) == "Let me check.\n"
    assert first.stop_reason == "tool_use"
    [call] = first.tool_calls
    assert (call.name, call.input) == ("weather", {"city": "Paris"})
    assert first.model == "lab/qwen2.5-coder:7b"
    # 120 input and 30 output tokens at $0.5 and $1.5 per million, from the user's price.
    assert first.cost is not None and first.cost.amount == Decimal("0.000105")

    history = [
        {"role": "user", "content": "Weather in Paris?"},
        first.message,
        {
            "role": "user",
            "content": [ToolResultBlock(tool_use_id=call.id, content="18C, sunny").model_dump()],
        },
    ]
    second = client.complete("lab/qwen2.5-coder:7b", history, tools=[WEATHER])
    assert second.text == "It is 18C in Paris."
    sent = wire_server.requests[1].json()
    # The stored call went back as a real tool call, the result as a tool message.
    assert sent["messages"][1]["tool_calls"][0]["function"]["name"] == "weather"
    assert sent["messages"][2] == {"role": "tool", "tool_call_id": call.id, "content": "18C, sunny"}
    assert wire_server.requests[0].headers["authorization"] == f"Bearer {planted_key}"
    client.close()


def test_disabling_textcalls_keeps_the_text_as_text(
    lab: Path, wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODELPLUG_DISABLE", "textcalls")
    wire_server.add_file(RECORDINGS / "lab_text_call.sse")
    client = Client()
    response = client.complete("lab/qwen2.5-coder:7b", "Weather in Paris?", tools=[WEATHER])
    assert response.tool_calls == []
    assert '"name": "weather"' in response.text
    client.close()


def test_rate_limit_falls_back_and_the_answer_is_the_fallbacks(
    lab: Path, wire_server: WireServer, planted_key: str
) -> None:
    wire_server.add_json(
        {
            "error": {
                "message": f"rate limited for key {planted_key}",
                "type": "rate_limit_exceeded",
            }
        },
        status=429,
        headers={"retry-after": "0"},
    )
    wire_server.add_json(
        {"error": {"message": "still limited"}}, status=429, headers={"retry-after": "0"}
    )
    wire_server.add_json(
        {"error": {"message": "still limited"}}, status=429, headers={"retry-after": "0"}
    )
    wire_server.add_file(RECORDINGS / "lab_answer.sse")
    client = Client()
    notices: list[str] = []
    response = client.complete(
        "lab/qwen2.5-coder:7b",
        "Weather?",
        on_event=lambda e: isinstance(e, Notice) and notices.append(e.message),
    )
    assert response.text == "It is 18C in Paris."
    assert response.model == "lab/backup"
    assert [r.json()["model"] for r in wire_server.requests] == ["qwen2.5-coder:7b"] * 3 + [
        "backup"
    ]
    assert any("lab/backup" in n for n in notices)
    assert all(planted_key not in n for n in notices)
    client.close()


def test_a_refused_connection_is_one_clear_line_in_the_cli(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from modelplug_kit.testing import refused_url

    (modelplug_config_dir / "config.toml").write_text(
        f'[providers.down]\ntype = "openai-compatible"\nbase_url = "{refused_url()}/v1"\n'
    )
    assert main(["chat", "-m", "down/m", "hi"]) == 1
    err = capsys.readouterr().err
    assert "Cannot reach down at" in err and "Is the server running?" in err
    assert "Traceback" not in err


def test_error_bodies_that_echo_the_key_are_masked(
    lab: Path, wire_server: WireServer, planted_key: str
) -> None:
    wire_server.add_json({"error": {"message": f"invalid api key {planted_key}"}}, status=401)
    wire_server.add_json({"error": {"message": f"invalid api key {planted_key}"}}, status=401)
    client = Client(disable=["fallback"])
    with pytest.raises(ModelError) as caught:
        client.complete("lab/qwen2.5-coder:7b", "hi")
    assert caught.value.error_class.kind == "auth"
    assert planted_key not in str(caught.value)
    client.close()


def test_price_command_says_when_a_price_is_unknown_and_how_to_set_one(
    lab: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["price", "lab/mystery-model", "--input", "10", "--output", "10"]) == 0
    out = capsys.readouterr().out
    assert "lab/mystery-model: price unknown: no pricing table knows it (modelplug-prices)" in out
    assert '[models."lab/mystery-model"]' in out
    assert main(["price", "lab/qwen2.5-coder:7b", "--input", "1000000", "--output", "0"]) == 0
    assert "total        $0.5" in capsys.readouterr().out
