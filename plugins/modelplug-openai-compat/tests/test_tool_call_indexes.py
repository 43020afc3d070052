"""Tool-call fragments joined by index, when a server numbers every call 0."""

from __future__ import annotations

from typing import Any

import modelplug_openai_compat
import pytest
from modelplug.contract.types import ToolSpec
from modelplug_kit.testing import WireServer


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
