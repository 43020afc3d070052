"""``GET /v1/models`` through the openai SDK: with no allow-list and no default model,
what the gateway can serve (a local server's models as it lists them, a hosted
provider's example when its key is set), not an empty list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from modelplug import Client
from modelplug_kit.testing import WireServer

RECORDINGS = Path(__file__).parent / "recordings"
ANTHROPIC_KEY = "sk-ant-invented-0123456789abcdef"


def gateway_client(wire: WireServer, tmp_path: Path, **config: Any) -> Client:
    pytest.importorskip("modelplug_openai_compat")
    pytest.importorskip("modelplug_anthropic")
    lab = {"type": "openai-compatible", "base_url": wire.url + "/v1"}
    return Client(
        enable=["modelplug-openai-compat", "modelplug-anthropic"],
        config={"providers": {"lab": lab}, **config},
        user_config=tmp_path / "none.toml",
        project_dir="/",
        environ={"MODELPLUG_DATA_DIR": str(tmp_path / "data"), "ANTHROPIC_API_KEY": ANTHROPIC_KEY},
    )


def listed(url: str) -> list[str]:
    import openai

    sdk = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
    return [model.id for model in sdk.models.list()]


def test_the_list_holds_what_can_be_served_without_a_default_model(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path
) -> None:
    wire_server.add_file(
        RECORDINGS / "llamacpp_models.json", path="/v1/models", content_type="application/json"
    )
    with gateway_client(wire_server, tmp_path) as client, serve(make_gateway(client=client)) as url:
        first = listed(url)
        again = listed(url)
    assert "lab/gemma-3-4b-it" in first  # what the server lists, under the user's name
    assert "anthropic/claude-sonnet-4-6" in first  # its key is set
    assert not any(name.startswith("openrouter/") for name in first)  # no key for it
    assert again == first
    assert len(wire_server.requests) == 1  # the server's list is kept, not asked per call


def test_the_settings_names_come_first(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path
) -> None:
    wire_server.add_json({"object": "list", "data": [{"id": "qwen3"}]}, path="/v1/models")
    config = {"aliases": {"fast": "lab/qwen3"}, "models": {"lab/big": {"context_window": 8192}}}
    client = gateway_client(wire_server, tmp_path, **config)
    with client, serve(make_gateway(client=client)) as url:
        names = listed(url)
    assert names[:3] == ["fast", "lab/big", "lab/qwen3"]


def test_an_allow_list_is_the_list_and_no_server_is_asked(
    make_gateway: Any, serve: Any, wire_server: WireServer, tmp_path: Path
) -> None:
    client = gateway_client(wire_server, tmp_path)
    with client, serve(make_gateway(client=client, models=["fast", "lab/qwen3"])) as url:
        assert listed(url) == ["fast", "lab/qwen3"]
    assert wire_server.requests == []
