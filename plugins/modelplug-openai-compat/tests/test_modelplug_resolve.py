"""modelplug_resolve and modelplug_providers: presets, user providers, specs."""

from __future__ import annotations

from decimal import Decimal

import modelplug_openai_compat as plugin
import pytest
from modelplug import ConfigError, UnknownProviderError, load_settings


def settings_with(tmp_path, **config):
    return load_settings(
        user_path=tmp_path / "none.toml", project_dir=tmp_path, environ={}, explicit=config
    )


def test_modelplug_resolve_splits_at_the_first_slash(tmp_path):
    route = plugin.modelplug_resolve("openrouter/qwen/qwen3-coder", settings_with(tmp_path), None)
    assert route is not None
    assert (route.provider, route.model) == ("openrouter", "qwen/qwen3-coder")
    assert route.endpoint.base_url == "https://openrouter.ai/api/v1"
    assert route.endpoint.api_key_env == "OPENROUTER_API_KEY"
    assert route.info.price is None  # unknown unless a price table knows it


@pytest.mark.parametrize(
    ("name", "url"),
    [
        ("ollama", "http://localhost:11434/v1"),
        ("lmstudio", "http://localhost:1234/v1"),
        ("llamacpp", "http://localhost:8080/v1"),
        ("vllm", "http://localhost:8000/v1"),
    ],
)
def test_modelplug_resolve_local_presets_are_local_with_a_default_window(tmp_path, name, url):
    route = plugin.modelplug_resolve(f"{name}/qwen3", settings_with(tmp_path), None)
    assert route is not None
    assert route.endpoint.base_url == url and route.endpoint.api_key_env is None
    assert route.endpoint.local  # so core prices it at zero (below)
    assert route.info.price is None  # the plugin leaves the price to core's rule
    assert route.info.context_window == 32_768
    assert any("32,768" in note for note in route.info.notes)


def test_modelplug_resolve_no_default_window_note_when_the_user_set_one(tmp_path):
    settings = settings_with(tmp_path, models={"ollama/qwen3": {"context_window": 65536}})
    route = plugin.modelplug_resolve("ollama/qwen3", settings, None)
    assert route is not None and route.info.context_window is None and not route.info.notes


def test_client_resolve_and_price_a_local_model_at_zero(make_client):
    client = make_client("modelplug-openai-compat", entry_points=True)
    route = client.resolve("llamacpp/any")
    assert route.info.price_source == "local (free)"
    assert client.price(route, plugin_usage()).amount == Decimal(0)


def plugin_usage():
    from modelplug.contract.types import Usage

    return Usage(input=1000, output=1000)


def test_modelplug_resolve_user_provider_replaces_a_preset(tmp_path):
    settings = settings_with(
        tmp_path,
        providers={
            "ollama": {
                "type": "openai-compatible",
                "base_url": "http://127.0.0.1:9999/v1",
                "headers": {"X-Team": "a"},
            }
        },
    )
    route = plugin.modelplug_resolve("ollama/qwen3", settings, None)
    assert route is not None
    assert route.endpoint.base_url == "http://127.0.0.1:9999/v1"
    # The route names the header; its value is read from the settings when sending.
    assert route.endpoint.headers == {"X-Team": "***"}
    assert settings.provider_headers("ollama") == {"X-Team": "a"}
    assert route.endpoint.local  # a local preset's name stays local (free)


def test_a_replaced_preset_keeps_its_key_variable_unless_told_none(tmp_path):
    def provider(**extra):
        table = {"type": "openai-compatible", "base_url": "https://proxy.example/v1", **extra}
        settings = settings_with(tmp_path, providers={"openrouter": table})
        route = plugin.modelplug_resolve("openrouter/qwen", settings, None)
        assert route is not None
        return route.endpoint.api_key_env

    assert provider() == "OPENROUTER_API_KEY"
    assert provider(api_key_env="PROXY_KEY") == "PROXY_KEY"
    # None given in code means no key: OpenRouter's must not go to the proxy.
    assert provider(api_key_env=None) is None


def test_modelplug_resolve_user_provider_on_loopback_is_not_assumed_free(tmp_path):
    settings = settings_with(
        tmp_path,
        providers={
            "proxy": {
                "type": "openai-compatible",
                "base_url": "http://localhost:4000/v1",
                "api_key_env": "LITELLM_KEY",
            }
        },
    )
    route = plugin.modelplug_resolve("proxy/claude-haiku", settings, None)
    assert route is not None and route.info.price is None
    assert route.endpoint.api_key_env == "LITELLM_KEY"


def test_modelplug_resolve_refuses_plain_http_to_another_host(tmp_path):
    with pytest.raises(ConfigError, match="allow_insecure_http"):
        settings_with(
            tmp_path,
            providers={"lab": {"type": "openai-compatible", "base_url": "http://10.1.2.3/v1"}},
        )


def test_modelplug_resolve_ignores_other_providers_and_types(tmp_path):
    settings = settings_with(tmp_path, providers={"ollama": {"type": "something-else"}})
    assert plugin.modelplug_resolve("ollama/qwen3", settings, None) is None
    assert plugin.modelplug_resolve("anthropic/claude", settings, None) is None
    assert plugin.modelplug_resolve("qwen3", settings, None) is None


def test_modelplug_resolve_needs_a_model(tmp_path, make_client):
    assert plugin.modelplug_resolve("ollama/", settings_with(tmp_path), None) is None
    with pytest.raises(ConfigError, match="names no model"):  # core's words, first
        make_client("modelplug-openai-compat", entry_points=True).resolve("ollama/")


def test_modelplug_resolve_user_provider_needs_a_base_url(tmp_path):
    settings = settings_with(tmp_path, providers={"lab": {"type": "openai-compatible"}})
    with pytest.raises(ConfigError, match="no base_url"):
        plugin.modelplug_resolve("lab/x", settings, None)


def test_modelplug_providers_lists_presets_and_user_providers(tmp_path):
    settings = settings_with(
        tmp_path,
        providers={
            "lab": {"type": "openai-compatible", "base_url": "https://llm.example.com/v1"},
            "vllm": {"type": "other"},
        },
    )
    assert [p.name for p in plugin.modelplug_providers(settings)] == [
        "cerebras",
        "deepinfra",
        "deepseek",
        "fireworks",
        "groq",
        "lab",
        "llamacpp",
        "lmstudio",
        "mistral",
        "ollama",
        "ollama-openai",
        "openai",
        "openai-chat",
        "openrouter",
        "perplexity",
        "together",
        "xai",
    ]


def test_unknown_provider_error_lists_ours(make_client):
    client = make_client("modelplug-openai-compat", entry_points=True)
    with pytest.raises(UnknownProviderError, match="openrouter"):
        client.resolve("nosuch/model")
