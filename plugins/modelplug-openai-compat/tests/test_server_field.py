"""``server = "..."`` in ``[providers.NAME]``: probes, the reasoning dialect and quirks
go by ``Endpoint.server``, so a provider the user named ``live`` is probed like the
llama-server it is."""

from __future__ import annotations

import pytest
from modelplug import ConfigError
from modelplug.contract.types import ThinkingRequest

ANSWER = [{"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}]
# llama.cpp's /props as llama-server answers it (the fields the probe reads).
PROPS = {
    "default_generation_settings": {"n_ctx": 8192, "params": {"n_predict": -1}},
    "total_slots": 1,
    "model_path": "/models/gemma-3-4b-it-Q4_K_M.gguf",
    "chat_template_caps": {"supports_tools": True},
}


def test_modelplug_probe_a_user_provider_named_live_as_the_llama_server_it_is(compat, wire_server):
    wire_server.add_json(PROPS, path="/props")
    client = compat(name="live", server="llamacpp")
    info = client.probe("live/gemma")
    assert info is not None
    assert (info.context_window, info.supports_tools) == (8192, True)
    assert wire_server.requests[-1].path == "/props"
    assert client.resolve("live/gemma").endpoint.server == "llamacpp"


def test_modelplug_probe_a_user_provider_without_a_server_is_not_probed(compat, wire_server):
    assert compat(name="live").probe("live/gemma") is None
    assert wire_server.requests == []


def test_modelplug_probe_a_vllm_server_by_its_models_listing(compat, wire_server):
    wire_server.add_json(
        {"object": "list", "data": [{"id": "qwen3", "object": "model", "max_model_len": 40960}]},
        path="/v1/models",
    )
    info = compat(name="lab", server="vllm").probe("lab/qwen3")
    assert info is not None and info.context_window == 40960


def test_the_reasoning_dialect_follows_the_server(compat, wire_server):
    wire_server.add_sse(ANSWER, done=True)
    compat(name="live", server="llamacpp").complete(
        "live/qwen3", "hi", thinking=ThinkingRequest(enabled=True, budget_tokens=512)
    )
    body = wire_server.requests[-1].json()
    assert body["chat_template_kwargs"] == {"enable_thinking": True}
    assert "reasoning_effort" not in body


def test_an_openai_server_gets_max_completion_tokens(compat, wire_server):
    wire_server.add_sse(ANSWER, done=True)
    compat(name="proxy", server="openai").complete("proxy/o4-mini", "hi", max_tokens=50)
    body = wire_server.requests[-1].json()
    assert body["max_completion_tokens"] == 50 and "max_tokens" not in body


def test_an_unknown_server_is_a_config_error_naming_the_known_ones(compat):
    with pytest.raises(ConfigError) as caught:
        compat(name="live", server="llama-cpp").resolve("live/gemma")
    assert "server = 'llama-cpp'" in str(caught.value)
    assert "llamacpp, vllm, ollama, lmstudio, litellm, openrouter" in str(caught.value)


@pytest.mark.parametrize(
    ("spec", "server"),
    [("ollama/q", "ollama"), ("llamacpp/q", "llamacpp"), ("openrouter/a/b", "openrouter")],
)
def test_presets_name_their_server(compat, spec, server):
    assert compat().resolve(spec).endpoint.server == server


def test_a_user_provider_that_replaces_a_preset_keeps_its_server(compat, wire_server):
    wire_server.add_json(PROPS, path="/props")
    info = compat(name="llamacpp").probe("llamacpp/any")
    assert info is not None and info.context_window == 8192
