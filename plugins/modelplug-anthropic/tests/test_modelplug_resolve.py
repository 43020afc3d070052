"""modelplug_resolve and modelplug_providers: specs, presets, user-defined providers,
and where a base URL may come from."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import modelplug_anthropic
import pytest
from modelplug import Client, UnknownProviderError

MakeClient = Callable[..., Client]


def write_user_config(config_dir: Path, text: str) -> None:
    (config_dir / "config.toml").write_text(text)


def test_modelplug_resolve_presets_and_bare_claude_ids(make_client: MakeClient) -> None:
    client = make_client(modelplug_anthropic)
    route = client.resolve("anthropic/claude-opus-5")
    assert (route.provider, route.model, route.endpoint.type) == (
        "anthropic",
        "claude-opus-5",
        "anthropic",
    )
    assert route.endpoint.api_key_env == "ANTHROPIC_API_KEY"
    assert route.endpoint.base_url is None  # the SDK's own default
    bare = client.resolve("claude-sonnet-4-6")
    assert bare.name == "anthropic/claude-sonnet-4-6"
    batch = client.resolve("anthropic-batch/claude-sonnet-4-6")
    assert (batch.provider, batch.endpoint.type) == ("anthropic-batch", "anthropic-batch")


def test_modelplug_resolve_knows_which_models_think(make_client: MakeClient) -> None:
    client = make_client(modelplug_anthropic)
    assert client.resolve("anthropic/claude-opus-5-5").info.thinking == "always"
    assert client.resolve("anthropic/claude-mythos-5-1").info.thinking == "always"
    assert client.resolve("anthropic/claude-opus-4-6").info.thinking == "optional"
    assert client.resolve("anthropic/claude-haiku-4-5").info.thinking is None


def test_modelplug_resolve_leaves_other_specs_alone() -> None:
    from modelplug import load_settings

    settings = load_settings(user_path="/nonexistent/config.toml", environ={}, use_project=False)
    for spec in ("ollama/qwen3", "gpt-4o", "anthropic/", "openrouter/anthropic/claude-opus-5"):
        assert (
            modelplug_anthropic.modelplug_resolve(spec=spec, settings=settings, provider_type=None)
            is None
        )


def test_modelplug_resolve_user_defined_provider(
    make_client: MakeClient, modelplug_config_dir: Path
) -> None:
    write_user_config(
        modelplug_config_dir,
        '[providers.work]\ntype = "anthropic"\nbase_url = "https://llm.example.com"\n'
        'api_key_env = "WORK_KEY"\nheaders = { "x-team" = "core" }\n',
    )
    client = make_client(modelplug_anthropic)
    route = client.resolve("work/claude-opus-5")
    assert route.endpoint.type == "anthropic"
    assert route.endpoint.base_url == "https://llm.example.com"
    assert route.endpoint.api_key_env == "WORK_KEY"
    assert "core" not in repr(route)  # header values stay masked
    assert "work" in client.providers()


def test_modelplug_resolve_batch_reaches_the_same_server_as_anthropic(
    make_client: MakeClient, modelplug_config_dir: Path
) -> None:
    write_user_config(
        modelplug_config_dir,
        '[providers.anthropic]\ntype = "anthropic"\nbase_url = "https://proxy.example.com/"\n',
    )
    client = make_client(modelplug_anthropic)
    assert client.resolve("anthropic-batch/claude-opus-5").endpoint.base_url == (
        "https://proxy.example.com"
    )


def test_modelplug_resolve_a_project_file_cannot_set_the_base_url(
    make_client: MakeClient, modelplug_config_dir: Path
) -> None:
    project = Path.cwd()
    (project / "modelplug.toml").write_text(
        '[providers.anthropic]\ntype = "anthropic"\nbase_url = "https://evil.example.com"\n'
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client = make_client(modelplug_anthropic)
        route = client.resolve("anthropic/claude-opus-5")
    assert route.endpoint.base_url is None


def test_modelplug_resolve_yields_a_name_given_to_another_type(
    make_client: MakeClient, modelplug_config_dir: Path
) -> None:
    write_user_config(
        modelplug_config_dir,
        '[providers.anthropic]\ntype = "openai-compatible"\nbase_url = "http://localhost:9/v1"\n',
    )
    client = make_client(modelplug_anthropic)
    with pytest.raises(UnknownProviderError):
        client.resolve("anthropic/claude-opus-5")


def test_modelplug_providers_lists_presets_and_user_defined(
    make_client: MakeClient, modelplug_config_dir: Path
) -> None:
    write_user_config(
        modelplug_config_dir,
        '[providers.slow]\ntype = "anthropic-batch"\n[providers.lab]\ntype = "openai-compatible"\n'
        'base_url = "http://localhost:9/v1"\n',
    )
    client = make_client(modelplug_anthropic)
    names = [p.name for p in modelplug_anthropic.modelplug_providers(settings=client.settings)]
    assert names == ["anthropic", "anthropic-batch", "slow"]
    assert client.resolve("slow/claude-opus-5").endpoint.type == "anthropic-batch"


def test_importing_the_plugin_does_not_import_the_sdk(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "import modelplug.host.plugins, modelplug.contract.types, modelplug.host.settings\n"
        "import modelplug_anthropic\n"
        "from modelplug.client.client import Client\n"
        "client = Client(plugins=[modelplug_anthropic], entry_points=False,\n"
        "                user_config='/nonexistent/config.toml')\n"
        "client.resolve('anthropic/claude-opus-5')\n"
        "loaded = sorted(m for m in ('anthropic', 'httpx2', 'httpx') if m in sys.modules)\n"
        "print(repr(loaded))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=tmp_path,
    ).stdout.split()
    assert out == ["[]"]


def test_modelplug_resolve_a_keyless_server_on_this_machine_needs_no_key(
    make_client: MakeClient, modelplug_config_dir: Path
) -> None:
    write_user_config(
        modelplug_config_dir,
        '[providers.llama-claude]\ntype = "anthropic"\nbase_url = "http://127.0.0.1:8080"\n'
        '[providers.slow]\ntype = "anthropic-batch"\nbase_url = "http://127.0.0.1:4000"\n',
    )
    client = make_client(modelplug_anthropic)
    local = client.resolve("llama-claude/qwen3")
    assert (local.endpoint.api_key_env, local.endpoint.local) == (None, True)
    assert local.info.price_source == "local (free)"
    # The Batch API is Anthropic's own, whatever proxy it goes through.
    batch = client.resolve("slow/claude-opus-5")
    assert (batch.endpoint.api_key_env, batch.endpoint.local) == ("ANTHROPIC_API_KEY", False)
