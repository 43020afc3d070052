"""Cases found in review: calls that all say index 0, redirects, error types mid-stream."""

from __future__ import annotations

from typing import Any

import modelplug_openai_compat
import pytest
from modelplug.errors import ModelError
from modelplug.testing import WireServer
from modelplug.types import ToolSpec


@pytest.fixture
def lab(make_client: Any, wire_server: WireServer, modelplug_config_dir: Any) -> Any:
    (modelplug_config_dir / "config.toml").write_text(
        f'[providers.lab]\ntype = "openai-compatible"\nbase_url = "{wire_server.url}/v1"\n'
    )
    return make_client(modelplug_openai_compat)


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def test_calls_all_numbered_zero_keep_their_own_arguments(
    lab: Any, wire_server: WireServer
) -> None:
    wire_server.add_sse(
        [
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "a", "function": {"name": "f", "arguments": ""}}
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"x": 1}'}}]}),
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "b", "function": {"name": "g", "arguments": ""}}
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"y": 2}'}}]}),
            chunk({}, "tool_calls"),
        ],
        done=True,
    )
    tools = [ToolSpec(name="f"), ToolSpec(name="g")]
    response = lab.complete("lab/m", "go", tools=tools)
    assert [(c.id, c.name, c.input) for c in response.tool_calls] == [
        ("a", "f", {"x": 1}),
        ("b", "g", {"y": 2}),
    ]


def test_a_redirect_is_an_error_naming_the_status_not_a_retry(
    lab: Any, wire_server: WireServer
) -> None:
    wire_server.add(
        b"", status=307, headers={"location": "https://elsewhere.example/v1/chat/completions"}
    )
    with pytest.raises(ModelError) as caught:
        lab.complete("lab/m", "hi")
    assert caught.value.error_class.kind == "other"
    assert not caught.value.error_class.retryable
    assert "307" in str(caught.value)


def test_an_error_event_keeps_its_type(lab: Any, wire_server: WireServer) -> None:
    wire_server.add_sse(
        [
            chunk({"content": "par"}),
            {"error": {"type": "insufficient_quota", "message": "out of credit"}},
        ]
    )
    with pytest.raises(ModelError) as caught:
        lab.complete("lab/m", "hi")
    assert caught.value.error_class.kind == "quota"
    assert not caught.value.error_class.retryable
    assert caught.value.partial is not None and caught.value.partial.text == "par"
