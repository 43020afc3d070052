"""Content is off by default; ``[otel] capture_content = true`` in the user's own file
adds the messages as the conventions' JSON, redacted; a project file cannot turn it on."""

from __future__ import annotations

import json
from typing import Any

import modelplug_otel
from modelplug import register_secret
from modelplug.testing import FakeModel, text
from opentelemetry.trace import SpanKind

SECRET = "sk-otel-test-5f3a9c0d1e2b4a6f"


def _call(spans: Any) -> Any:
    (call,) = [s for s in spans() if s.kind is SpanKind.CLIENT]
    return call


def test_content_is_not_captured_by_default(make_client: Any, spans: Any) -> None:
    make_client(FakeModel([text("the answer")]), modelplug_otel).complete("fake/m", "question")
    attributes = _call(spans).attributes
    assert "gen_ai.input.messages" not in attributes
    assert "gen_ai.output.messages" not in attributes


def test_capture_content_in_the_user_file_adds_redacted_messages(
    make_client: Any, spans: Any, modelplug_config_dir: Any
) -> None:
    (modelplug_config_dir / "config.toml").write_text("[otel]\ncapture_content = true\n")
    register_secret(SECRET)
    client = make_client(FakeModel([text(f"echo {SECRET}")]), modelplug_otel)

    client.complete("fake/m", f"my key is {SECRET}", system="be brief")

    attributes = _call(spans).attributes
    sent = json.loads(attributes["gen_ai.input.messages"])
    assert sent[0]["role"] == "user" and sent[0]["parts"][0]["type"] == "text"
    assert "my key is" in sent[0]["parts"][0]["content"]
    answer = json.loads(attributes["gen_ai.output.messages"])
    assert answer[0]["role"] == "assistant" and answer[0]["finish_reason"] == "stop"
    assert json.loads(attributes["gen_ai.system_instructions"])[0]["content"] == "be brief"
    dumped = json.dumps(dict(attributes))
    assert SECRET not in dumped and "echo" in dumped


def test_a_project_file_cannot_turn_content_capture_on(
    make_client: Any, spans: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    (tmp_path / "modelplug.toml").write_text("[otel]\ncapture_content = true\n")
    monkeypatch.chdir(tmp_path)
    client = make_client(FakeModel([text("the answer")]), modelplug_otel)
    assert client.settings.plugin_options("otel").get("capture_content") is True  # it was read

    client.complete("fake/m", "question")

    assert "gen_ai.input.messages" not in _call(spans).attributes
