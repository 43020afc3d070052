"""modelplug_probe: what a local server actually loaded."""

from __future__ import annotations

import pytest
from modelplug.errors import ModelError


def test_modelplug_probe_llamacpp_props(compat, wire_server):
    wire_server.add_json(
        {
            "default_generation_settings": {"n_ctx": 16384},
            "chat_template_caps": {"supports_tools": True},
        },
        path="/props",
    )
    info = compat(name="llamacpp").probe("llamacpp/any")
    assert info is not None
    assert info.context_window == 16384 and info.supports_tools is True
    assert wire_server.requests[-1].path == "/props"


def test_modelplug_probe_ollama_show_and_ps(compat, wire_server):
    wire_server.add_json(
        {
            "parameters": 'num_ctx 8192\nstop "<|im_end|>"',
            "model_info": {"qwen2.context_length": 32768},
            "capabilities": ["completion", "tools"],
        },
        path="/api/show",
    )
    wire_server.add_json({"models": [{"name": "qwen3", "context_length": 4096}]}, path="/api/ps")
    info = compat(name="ollama").probe("ollama/qwen3")
    assert info is not None
    assert info.context_window == 4096  # what is loaded wins over num_ctx
    assert info.supports_tools is True and info.thinking == "never"
    show = next(r for r in wire_server.requests if r.path == "/api/show")
    assert show.json() == {"model": "qwen3"}


def test_modelplug_probe_ollama_falls_back_to_num_ctx(compat, wire_server):
    wire_server.add_json(
        {"parameters": "num_ctx 8192", "capabilities": ["completion"]}, path="/api/show"
    )
    wire_server.add_json({"models": []}, path="/api/ps")
    info = compat(name="ollama").probe("ollama/qwen3")
    assert info is not None and info.context_window == 8192 and info.supports_tools is False


def test_modelplug_probe_vllm_models(compat, wire_server):
    wire_server.add_json(
        {"data": [{"id": "Qwen/Qwen3-8B", "max_model_len": 40960}]}, path="/v1/models"
    )
    info = compat(name="vllm").probe("vllm/Qwen/Qwen3-8B")
    assert info is not None and info.context_window == 40960


def test_modelplug_probe_is_none_for_hosted_providers(compat):
    assert compat().probe("wire/m") is None


def test_modelplug_probe_on_a_refused_server(make_client):
    from modelplug.testing import refused_url

    base = refused_url() + "/v1"
    client = make_client(
        "modelplug-openai-compat",
        entry_points=True,
        config={"providers": {"llamacpp": {"type": "openai-compatible", "base_url": base}}},
    )
    with pytest.raises(ModelError, match="Cannot reach llamacpp"):
        client.probe("llamacpp/any")


def test_modelplug_probe_lmstudio_models(compat, wire_server):
    wire_server.add_json(
        {
            "data": [
                {"id": "other", "max_context_length": 4096},
                {
                    "id": "qwen3-8b",
                    "max_context_length": 40960,
                    "loaded_context_length": 8192,
                    "capabilities": ["tool_use"],
                },
            ]
        },
        path="/api/v0/models",
    )
    info = compat(name="lmstudio").probe("lmstudio/qwen3-8b")
    assert info is not None and info.context_window == 8192 and info.supports_tools is True
