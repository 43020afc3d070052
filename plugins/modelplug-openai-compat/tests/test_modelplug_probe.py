"""modelplug_probe: what a local server actually loaded."""

from __future__ import annotations

import json

import pytest
from modelplug import ModelError


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


def test_a_probe_takes_true_for_no_token_count(compat, wire_server):
    # JSON's true is an int to Python; as a context window it means nothing.
    wire_server.add_json({"default_generation_settings": {"n_ctx": True}}, path="/props")
    info = compat(name="llamacpp").probe("llamacpp/any")
    assert info is not None and info.context_window is None


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


def test_modelplug_probe_ollama_without_api_ps_still_reads_api_show(compat, wire_server):
    # An older Ollama (or a proxy in front of it) answers 404 to /api/ps.
    wire_server.add_json(
        {"parameters": "num_ctx 8192", "capabilities": ["completion"]}, path="/api/show"
    )
    wire_server.add_json({"error": "404 page not found"}, status=404, path="/api/ps")
    info = compat(name="ollama").probe("ollama/qwen3")
    assert info is not None and info.context_window == 8192


def test_modelplug_probe_vllm_models(compat, wire_server):
    wire_server.add_json(
        {"data": [{"id": "Qwen/Qwen3-8B", "max_model_len": 40960}]}, path="/v1/models"
    )
    info = compat(name="vllm").probe("vllm/Qwen/Qwen3-8B")
    assert info is not None and info.context_window == 40960


def test_modelplug_probe_is_none_for_hosted_providers(compat):
    assert compat().probe("wire/m") is None


def test_modelplug_probe_on_a_refused_server(make_client):
    from modelplug_kit.testing import refused_url

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


# -- the key, and answers that are not JSON --------------------------------------------


def test_modelplug_probe_sends_the_key_of_a_keyed_user_provider(compat, wire_server, planted_key):
    # A user provider named like a preset, behind a proxy that wants a key.
    wire_server.add_json(
        {"data": [{"id": "Qwen/Qwen3-8B", "max_model_len": 40960}]}, path="/v1/models"
    )
    client = compat(
        name="vllm",
        api_key_env="PLANTED_API_KEY",
        headers={"X-Team": "infra"},
        environ={"PLANTED_API_KEY": planted_key},
    )
    info = client.probe("vllm/Qwen/Qwen3-8B")
    assert info is not None and info.context_window == 40960
    headers = wire_server.requests[-1].headers
    assert headers["authorization"] == f"Bearer {planted_key}"
    assert headers["x-team"] == "infra"


def test_modelplug_probe_without_the_key_still_probes_a_keyless_server(compat, wire_server):
    # The endpoint names a key variable that is not set: the probe goes out without one.
    wire_server.add_json({"default_generation_settings": {"n_ctx": 4096}}, path="/props")
    client = compat(name="llamacpp", api_key_env="LAB_KEY", headers={"X-Team": "infra"})
    info = client.probe("llamacpp/any")
    assert info is not None and info.context_window == 4096
    headers = wire_server.requests[-1].headers
    assert "authorization" not in headers
    assert headers["x-team"] == "infra"
    assert headers["accept"] == "application/json"


def test_modelplug_probe_an_html_page_is_a_clear_error(compat, wire_server):
    wire_server.add(
        "<html><body>Please log in</body></html>",
        path="/props",
        content_type="text/html; charset=utf-8",
    )
    with pytest.raises(ModelError) as caught:
        compat(name="llamacpp").probe("llamacpp/any")
    error = caught.value
    assert not isinstance(error, json.JSONDecodeError)
    assert not isinstance(error.__cause__, json.JSONDecodeError)
    message = str(error)
    assert "\n" not in message
    for part in ("llamacpp", "GET /props", "status 200", "text/html", "not JSON", "base_url"):
        assert part in message
    assert "log in" not in message  # the body is not quoted
    assert error.kind == "other"


def test_modelplug_probe_an_empty_answer_is_a_clear_error(compat, wire_server):
    wire_server.add(b"", path="/v1/models", content_type="application/json")
    with pytest.raises(ModelError, match=r"vllm \(GET /v1/models\).*status 200.*empty, not JSON"):
        compat(name="vllm").probe("vllm/m")


def test_modelplug_probe_a_json_list_is_a_clear_error(compat, wire_server):
    wire_server.add_json([{"id": "qwen3-8b"}], path="/api/v0/models")
    with pytest.raises(ModelError) as caught:
        compat(name="lmstudio").probe("lmstudio/qwen3-8b")
    message = str(caught.value)
    assert "lmstudio (GET /api/v0/models)" in message
    assert "application/json" in message
    assert "JSON but not an object (a list)" in message


def test_modelplug_probe_items_that_are_not_objects_are_skipped(compat, wire_server):
    wire_server.add_json({"data": ["Qwen/Qwen3-8B", 7]}, path="/v1/models")
    info = compat(name="vllm").probe("vllm/Qwen/Qwen3-8B")
    assert info is not None and info.context_window is None
