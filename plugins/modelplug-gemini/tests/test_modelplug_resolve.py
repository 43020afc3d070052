"""modelplug_resolve and modelplug_providers: which specs this plugin serves."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import modelplug_gemini
import pytest
from modelplug import Provider
from modelplug.client.client import Client


def test_modelplug_resolve_gemini_and_vertex(make_client: Callable[..., Client]) -> None:
    client = make_client(modelplug_gemini)
    route = client.resolve("gemini/gemini-2.5-flash")
    assert (route.provider, route.model, route.endpoint.type) == (
        "gemini",
        "gemini-2.5-flash",
        "gemini",
    )
    assert route.endpoint.api_key_env == "GEMINI_API_KEY"
    assert route.endpoint.base_url is None  # Google's own endpoint, decided when sending
    assert route.info.thinking == "optional" and route.info.supports_tools
    vertex = client.resolve("vertex/gemini-3-pro-preview")
    assert (vertex.endpoint.type, vertex.endpoint.api_key_env, vertex.info.thinking) == (
        "vertex",
        None,
        "always",
    )
    bare = client.resolve("gemini-2.0-flash")
    assert (bare.provider, bare.info.thinking) == ("gemini", "never")
    assert client.resolve("gemini/models/gemini-2.5-pro").model == "gemini-2.5-pro"


def test_modelplug_resolve_leaves_other_specs(make_client: Callable[..., Client]) -> None:
    settings = make_client(modelplug_gemini).settings
    assert modelplug_gemini.modelplug_resolve("anthropic/claude-x", settings, None) is None
    assert (
        modelplug_gemini.modelplug_resolve("gemini/gemini-2.5-flash", settings, "anthropic") is None
    )
    assert modelplug_gemini.modelplug_resolve("gemini/", settings, None) is None


def test_modelplug_resolve_user_providers_of_our_types(
    make_client: Callable[..., Client], modelplug_config_dir: Path
) -> None:
    (modelplug_config_dir / "config.toml").write_text(
        '[providers.work]\ntype = "gemini"\napi_key_env = "WORK_GEMINI_KEY"\n'
        'base_url = "https://gemini-proxy.example.com/"\nheaders = { x-team = "core" }\n'
        '[providers.eu]\ntype = "vertex"\n'
    )
    client = make_client(modelplug_gemini)
    work = client.resolve("work/gemini-2.5-pro")
    assert (work.endpoint.type, work.endpoint.api_key_env) == ("gemini", "WORK_GEMINI_KEY")
    assert work.endpoint.base_url == "https://gemini-proxy.example.com"
    assert client.resolve("eu/gemini-2.5-flash").endpoint.type == "vertex"


def test_modelplug_providers_declares_ours_and_the_users(
    make_client: Callable[..., Client], modelplug_config_dir: Path
) -> None:
    (modelplug_config_dir / "config.toml").write_text(
        '[providers.work]\ntype = "gemini"\n[providers.eu]\ntype = "vertex"\n'
        '[providers.lab]\ntype = "openai-compatible"\nbase_url = "http://localhost:1/v1"\n'
    )
    client = make_client(modelplug_gemini)
    names = {p.name: p for p in modelplug_gemini.modelplug_providers(client.settings)}
    assert set(names) == {"gemini", "vertex", "work", "eu"}
    assert names["gemini"] == Provider(
        name="gemini", type="gemini", native=True, example="gemini-2.5-flash"
    )
    assert names["vertex"].native and names["vertex"].type == "vertex"
    assert (names["work"].type, names["eu"].type) == ("gemini", "vertex")


def test_a_project_file_cannot_set_the_base_url(
    make_client: Callable[..., Client], modelplug_config_dir: Path
) -> None:
    Path("modelplug.toml").write_text(
        '[providers.gemini]\ntype = "gemini"\nbase_url = "https://evil.example.com"\n'
    )
    with pytest.warns(Warning, match="providers"):
        client = make_client(modelplug_gemini)
    assert client.resolve("gemini/gemini-2.5-flash").endpoint.base_url is None


def test_a_keyless_gemini_server_on_this_machine_needs_no_key_and_vertex_is_never_local(
    make_client: Callable[..., Client], modelplug_config_dir: Path
) -> None:
    (modelplug_config_dir / "config.toml").write_text(
        '[providers.box]\ntype = "gemini"\nbase_url = "http://127.0.0.1:8080"\n'
        '[providers.vx]\ntype = "vertex"\nbase_url = "http://127.0.0.1:8081"\n'
    )
    client = make_client(modelplug_gemini)
    box = client.resolve("box/gemma-3")
    assert (box.endpoint.api_key_env, box.endpoint.local) == (None, True)
    assert box.info.price_source == "local (free)"
    # Vertex sends Google Cloud credentials wherever it goes: a proxy to a paid API.
    assert client.resolve("vx/gemini-2.5-flash").endpoint.local is False
