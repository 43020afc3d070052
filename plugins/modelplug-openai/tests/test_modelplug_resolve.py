"""Which specs this plugin serves, its provider declarations, and the precedence over
openai-compat's generic ``openai`` preset."""

from __future__ import annotations

import modelplug_openai
import pytest
from modelplug import ConfigError
from modelplug.contract.types import Provider


def test_modelplug_resolve_openai_is_the_responses_api(make_client):
    client = make_client("modelplug-openai", entry_points=True)
    route = client.resolve("openai/gpt-5")
    assert (route.provider, route.model) == ("openai", "gpt-5")
    assert route.endpoint.type == "openai-responses"
    assert route.endpoint.base_url == "https://api.openai.com/v1"
    assert route.endpoint.api_key_env == "OPENAI_API_KEY"
    assert route.plugin == "modelplug-openai"
    assert route.info.thinking == "always"
    assert any("Responses API" in note for note in route.info.notes)


def test_modelplug_resolve_wins_over_openai_compat_preset(make_client):
    client = make_client("modelplug-openai", "modelplug-openai-compat", entry_points=True)
    route = client.resolve("openai/gpt-4.1")
    assert route.endpoint.type == "openai-responses" and route.plugin == "modelplug-openai"
    assert route.info.thinking is None


def test_the_user_can_pin_openai_to_chat_completions(make_client):
    # Needs the other plugin of the name; the plugin's own sdist tests run without it.
    pytest.importorskip("modelplug_openai_compat")
    config = {
        "providers": {
            "openai": {
                "type": "openai-compatible",
                "base_url": "https://api.openai.com/v1",
                "api_key_env": "OPENAI_API_KEY",
            }
        }
    }
    client = make_client(
        "modelplug-openai", "modelplug-openai-compat", entry_points=True, config=config
    )
    route = client.resolve("openai/gpt-4.1")
    assert route.endpoint.type == "openai-compatible"
    names = {p.name for p in modelplug_openai.modelplug_providers(client.settings)}
    assert "openai" not in names


def test_modelplug_resolve_user_providers_of_this_type(make_client):
    config = {
        "providers": {
            "azure": {
                "type": "openai-responses",
                "base_url": "https://lab.openai.azure.com/openai/v1/",
                "api_key_env": "AZURE_OPENAI_API_KEY",
            },
            "proxy": {
                "type": "openai-responses",
                "base_url": "http://127.0.0.1:4000/v1",
                "headers": {"X-Team": "a"},
            },
        }
    }
    client = make_client("modelplug-openai", entry_points=True, config=config)
    azure = client.resolve("azure/gpt-5-mini")
    assert azure.endpoint.type == "openai-responses"
    assert azure.endpoint.base_url == "https://lab.openai.azure.com/openai/v1"
    assert azure.endpoint.api_key_env == "AZURE_OPENAI_API_KEY"
    proxy = client.resolve("proxy/openai/gpt-5")
    assert proxy.model == "openai/gpt-5" and proxy.info.thinking == "always"
    assert proxy.endpoint.headers == {"X-Team": "***"}  # names only: values are read at send time
    # On this machine and naming no key: no key (not OPENAI_API_KEY), and free.
    assert proxy.endpoint.api_key_env is None and proxy.endpoint.local
    assert proxy.info.price_source == "local (free)"
    remote = make_client(
        "modelplug-openai",
        entry_points=True,
        config={
            "providers": {"gate": {"type": "openai-responses", "base_url": "https://g.example/v1"}}
        },
    ).resolve("gate/gpt-5")
    assert remote.endpoint.api_key_env == "OPENAI_API_KEY"  # the default key variable
    assert not remote.endpoint.local


def test_modelplug_resolve_refuses_what_is_not_its_own(make_client):
    settings = make_client("modelplug-openai", entry_points=True).settings
    assert modelplug_openai.modelplug_resolve("gpt-5", settings, None) is None
    assert modelplug_openai.modelplug_resolve("ollama/qwen3", settings, None) is None
    assert modelplug_openai.modelplug_resolve("openai/gpt-5", settings, "openai-compatible") is None
    assert modelplug_openai.modelplug_resolve("openai/", settings, "openai-responses") is None
    with pytest.raises(ConfigError, match=r"names no model.*e\.g\. openai/gpt-5"):  # core's
        make_client("modelplug-openai", entry_points=True).resolve("openai/")


def test_a_user_provider_of_this_type_needs_a_base_url(make_client):
    client = make_client(
        "modelplug-openai",
        entry_points=True,
        config={"providers": {"lab": {"type": "openai-responses"}}},
    )
    with pytest.raises(ConfigError, match="no base_url"):
        client.resolve("lab/gpt-5")


def test_modelplug_providers_declares_openai_native(make_client):
    client = make_client(
        "modelplug-openai",
        entry_points=True,
        config={
            "providers": {"lab": {"type": "openai-responses", "base_url": "https://lab.example/v1"}}
        },
    )
    declared = modelplug_openai.modelplug_providers(client.settings)
    assert (
        Provider(name="openai", type="openai-responses", native=True, example="gpt-5") in declared
    )
    assert Provider(name="lab", type="openai-responses", native=True, example="gpt-5") in declared
