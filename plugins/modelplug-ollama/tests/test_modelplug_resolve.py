"""modelplug_resolve and modelplug_providers: where ``ollama/<model>`` goes and how."""

from __future__ import annotations

from decimal import Decimal

import pytest
from modelplug import ConfigError

PLUGIN = "modelplug-ollama"


def client_with(make_client, *plugins, environ=None, config=None):
    return make_client(*plugins, entry_points=True, config=config or {}, environ=environ or {})


def test_modelplug_resolve_default_route(make_client):
    route = client_with(make_client, PLUGIN).resolve("ollama/qwen3:8b")
    assert route.plugin == PLUGIN
    assert (route.provider, route.model) == ("ollama", "qwen3:8b")
    assert route.endpoint.type == "ollama"
    assert route.endpoint.base_url == "http://localhost:11434"
    assert route.endpoint.api_key_env is None
    assert route.endpoint.local is True


def test_modelplug_resolve_local_is_free_and_says_what_window_it_assumes(make_client):
    info = client_with(make_client, PLUGIN).resolve("ollama/qwen3:8b").info
    assert info.price is not None
    assert (info.price.input, info.price.output) == (Decimal(0), Decimal(0))
    assert info.price_source == "local (free)"
    assert info.context_window == 32768
    (note,) = info.notes
    assert "no context_window entry" in note
    assert "num_ctx 32768" in note
    assert "modelplug resolve --probe" in note


def test_modelplug_resolve_a_window_in_settings_needs_no_note(make_client):
    config = {"models": {"ollama/qwen3:8b": {"context_window": 40960}}}
    info = client_with(make_client, PLUGIN, config=config).resolve("ollama/qwen3:8b").info
    assert info.context_window == 40960
    assert info.notes == []


def test_modelplug_resolve_a_model_id_with_slashes(make_client):
    route = client_with(make_client, PLUGIN).resolve("ollama/hf.co/org/model:Q4_K_M")
    assert route.model == "hf.co/org/model:Q4_K_M"


def test_modelplug_resolve_names_no_model(make_client):
    with pytest.raises(ConfigError, match="names no model"):
        client_with(make_client, PLUGIN).resolve("ollama/")


@pytest.mark.parametrize(
    ("value", "url"),
    [
        ("127.0.0.1:11500", "http://127.0.0.1:11500"),
        ("localhost", "http://localhost:11434"),
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("0.0.0.0:8080", "http://127.0.0.1:8080"),
        ("[::]:11434", "http://[::1]:11434"),
        ("::1", "http://[::1]:11434"),
        ("http://localhost", "http://localhost:80"),
        ("https://localhost/ollama/", "https://localhost:443/ollama"),
        ('"localhost:11435"', "http://localhost:11435"),
        ("ollama.com", "https://ollama.com:443"),
    ],
)
def test_modelplug_resolve_reads_ollama_host_as_ollama_does(make_client, value, url):
    route = client_with(make_client, PLUGIN, environ={"OLLAMA_HOST": value}).resolve("ollama/m")
    assert route.endpoint.base_url == url


def test_modelplug_resolve_refuses_plain_http_beyond_this_machine_from_ollama_host(make_client):
    client = client_with(make_client, PLUGIN, environ={"OLLAMA_HOST": "192.168.1.20:11434"})
    with pytest.raises(ConfigError, match="allow_insecure_http = true"):
        client.resolve("ollama/m")


def test_modelplug_resolve_a_bad_ollama_host_is_a_config_error(make_client):
    client = client_with(make_client, PLUGIN, environ={"OLLAMA_HOST": "localhost:port"})
    with pytest.raises(ConfigError, match="OLLAMA_HOST"):
        client.resolve("ollama/m")


def test_modelplug_resolve_the_users_base_url_wins_over_ollama_host(make_client):
    config = {"providers": {"ollama": {"type": "ollama", "base_url": "http://127.0.0.1:9999"}}}
    client = client_with(
        make_client, PLUGIN, config=config, environ={"OLLAMA_HOST": "127.0.0.1:11500"}
    )
    assert client.resolve("ollama/m").endpoint.base_url == "http://127.0.0.1:9999"


def test_modelplug_resolve_a_project_file_cannot_point_ollama_elsewhere(
    make_client, tmp_path, monkeypatch
):
    (tmp_path / "modelplug.toml").write_text(
        '[providers.ollama]\ntype = "ollama"\nbase_url = "https://evil.example"\n'
    )
    monkeypatch.chdir(tmp_path)
    with pytest.warns(Warning, match="providers"):
        client = make_client(PLUGIN, entry_points=True, environ={}, project_dir=tmp_path)
    assert client.resolve("ollama/m").endpoint.base_url == "http://localhost:11434"


def test_modelplug_resolve_a_hosted_ollama_with_a_key_is_not_free(make_client):
    config = {
        "providers": {
            "cloud": {
                "type": "ollama",
                "base_url": "https://ollama.example.com",
                "api_key_env": "CLOUD_KEY",
                "headers": {"X-Team": "lab"},
            }
        }
    }
    route = client_with(make_client, PLUGIN, config=config).resolve("cloud/gpt-oss:120b")
    assert route.plugin == PLUGIN
    assert route.endpoint.base_url == "https://ollama.example.com"
    assert route.endpoint.api_key_env == "CLOUD_KEY"
    assert route.endpoint.headers == {"X-Team": "***"}  # names only: values are read at send time
    assert route.endpoint.local is False
    assert route.info.price is None


def test_modelplug_providers_declares_ollama_native_and_the_users_own(make_client):
    config = {"providers": {"lab": {"type": "ollama", "base_url": "http://127.0.0.1:1"}}}
    client = client_with(make_client, PLUGIN, config=config)
    declared = client.declared_providers()
    ((ollama, plugin),) = declared["ollama"]
    assert (ollama.type, ollama.native, ollama.example, plugin) == (
        "ollama",
        True,
        "qwen3:8b",
        PLUGIN,
    )
    ((lab, _),) = declared["lab"]
    assert lab.type == "ollama"


def test_with_openai_compat_installed_ollama_is_served_natively(make_client):
    pytest.importorskip("modelplug_openai_compat")
    client = client_with(make_client, PLUGIN, "modelplug-openai-compat")
    route = client.resolve("ollama/qwen3:8b")
    assert route.plugin == PLUGIN
    assert route.endpoint.type == "ollama"


def test_the_user_can_pin_ollama_to_the_openai_compatible_endpoint(make_client):
    pytest.importorskip("modelplug_openai_compat")
    config = {"providers": {"ollama": {"type": "openai-compatible"}}}
    client = client_with(make_client, PLUGIN, "modelplug-openai-compat", config=config)
    route = client.resolve("ollama/qwen3:8b")
    assert route.plugin == "modelplug-openai-compat"
    assert route.endpoint.base_url == "http://localhost:11434/v1"
    assert [p.type for p, _ in client.declared_providers()["ollama"]] == ["openai-compatible"]


def test_modelplug_resolve_leaves_other_providers_alone(make_client):
    from modelplug import UnknownProviderError

    with pytest.raises(UnknownProviderError):
        client_with(make_client, PLUGIN).resolve("lmstudio/m")
