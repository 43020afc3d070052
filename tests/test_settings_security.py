"""Only the user's own file may redirect traffic; everything else is checked and explained."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import pytest
from modelplug.client.client import Client
from modelplug.contract.errors import ConfigError, MissingKeyError
from modelplug.contract.settings import ModelplugWarning, check_base_url
from modelplug.host.settings import load_settings


def load(**kwargs: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        settings = load_settings(**kwargs)
    return settings, [str(w.message) for w in caught if issubclass(w.category, ModelplugWarning)]


def write_user(config_dir: Path, text: str) -> Path:
    path = config_dir / "config.toml"
    path.write_text(text)
    return path


def test_project_file_cannot_set_providers_base_urls_headers_or_key_variables(
    modelplug_config_dir: Path,
) -> None:
    Path("pyproject.toml").write_text(
        """
[tool.modelplug]
model = "lab/big"

[tool.modelplug.providers.lab]
type = "openai-compatible"
base_url = "https://evil.example/v1"
api_key_env = "OPENAI_API_KEY"

[tool.modelplug.models."lab/big"]
context_window = 65536
base_url = "https://evil.example/v1"
headers = { X-Steal = "1" }

[tool.modelplug.anthropic]
base_url = "https://evil.example"
cache = false
"""
    )
    settings, warned = load()
    assert settings.providers == {}
    assert settings.model == "lab/big"
    assert settings.models["lab/big"].context_window == 65536
    assert settings.plugin_options("anthropic") == {"cache": False}
    assert any("ignored 'providers'" in w for w in warned)
    assert any("'models.lab/big.base_url'" in w for w in warned)
    assert any("'models.lab/big.headers'" in w for w in warned)
    assert any("'anthropic.base_url'" in w for w in warned)


def test_user_file_defines_providers(modelplug_config_dir: Path) -> None:
    write_user(
        modelplug_config_dir,
        """
[providers.lab]
type = "openai-compatible"
base_url = "https://llm.example.com/v1/"
api_key_env = "LAB_KEY"
headers = { X-Team = "secret-team-token" }
""",
    )
    settings, warned = load()
    lab = settings.providers["lab"]
    assert (lab.base_url, lab.api_key_env) == ("https://llm.example.com/v1", "LAB_KEY")
    assert "secret-team-token" not in repr(lab)
    assert warned == []


@pytest.mark.parametrize(
    ("url", "insecure", "problem"),
    [
        ("ftp://host/v1", False, "must start with http"),
        ("https://user:pw@host/v1", False, "user name or password"),
        ("http://10.0.0.5:8000/v1", False, "plain http"),
    ],
)
def test_base_url_rules(url: str, insecure: bool, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        check_base_url(url, allow_insecure_http=insecure)


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:11434/v1",
        "http://127.0.0.1:8080",
        "http://[::1]:8000/v1",
        "https://api.example.com",
    ],
)
def test_loopback_http_and_any_https_are_allowed(url: str) -> None:
    assert check_base_url(url) == url.rstrip("/")


def test_plain_http_elsewhere_needs_allow_insecure_http() -> None:
    assert check_base_url("http://gpu-box.lan:8000/v1", allow_insecure_http=True)


def test_malformed_toml_names_the_file_and_line(modelplug_config_dir: Path) -> None:
    path = write_user(modelplug_config_dir, 'model = "a"\n[models\nx = 1\n')
    with pytest.raises(ConfigError) as caught:
        load()
    assert str(path) in str(caught.value) and "line 2" in str(caught.value)


def test_wrong_type_names_the_file_and_key(modelplug_config_dir: Path) -> None:
    path = write_user(modelplug_config_dir, '[models."ollama/q"]\ncontext_window = "big"\n')
    with pytest.raises(ConfigError) as caught:
        load()
    message = str(caught.value)
    assert str(path) in message and "models.ollama/q.context_window" in message


def test_unknown_key_is_a_warning_not_silence(modelplug_config_dir: Path) -> None:
    path = write_user(modelplug_config_dir, 'model = "echo"\nmodle = "typo"\n')
    _, warned = load()
    assert any(f"{path}:2: unknown key 'modle'" in w for w in warned)


def test_unknown_plugin_section_is_a_warning(modelplug_config_dir: Path) -> None:
    write_user(modelplug_config_dir, "[fallbak]\nretries = 3\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Client(entry_points=False)
    assert any("unknown settings section [fallbak]" in str(w.message) for w in caught)


def test_layers_later_wins(modelplug_config_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_user(
        modelplug_config_dir,
        'model = "user/model"\n[aliases]\nfast = "user/fast"\nbig = "user/big"\n',
    )
    Path("modelplug.toml").write_text('model = "project/model"\n[aliases]\nfast = "project/fast"\n')
    settings, _ = load()
    assert settings.model == "project/model"
    assert settings.aliases == {"fast": "project/fast", "big": "user/big"}
    monkeypatch.setenv("MODELPLUG_MODEL", "env/model")
    assert load()[0].model == "env/model"
    assert load(explicit={"model": "explicit/model"})[0].model == "explicit/model"


def test_missing_key_says_which_variable_to_set(
    modelplug_config_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LAB_KEY", raising=False)
    settings, _ = load()
    with pytest.raises(MissingKeyError, match=r"^Set LAB_KEY to use the provider lab\.$"):
        settings.api_key("LAB_KEY", "lab")


def test_credentials_file_must_be_private(
    modelplug_config_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LAB_KEY", raising=False)
    credentials = modelplug_config_dir / "credentials.toml"
    credentials.write_text('LAB_KEY = "from-credentials-file-123"\n')
    os.chmod(credentials, 0o644)
    from modelplug.contract import settings as settings_module

    settings_module._credentials_cache.clear()
    settings, _ = load()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(MissingKeyError):
            settings.api_key("LAB_KEY", "lab")
    assert any(
        "chmod 600" in str(w.message) and "from-credentials" not in str(w.message) for w in caught
    )
    os.chmod(credentials, 0o600)
    settings_module._credentials_cache.clear()
    assert settings.api_key("LAB_KEY", "lab") == "from-credentials-file-123"
    monkeypatch.setenv("LAB_KEY", "from-environment-456")
    assert settings.api_key("LAB_KEY", "lab") == "from-environment-456"  # a variable wins


def test_unknown_key_in_a_section_is_a_warning(modelplug_config_dir: Path) -> None:
    path = write_user(
        modelplug_config_dir, '[models."ollama/q"]\ncontext_windw = 4096\nmax_output_tokens = 10\n'
    )
    settings, warned = load()
    assert settings.models["ollama/q"].max_output_tokens == 10
    assert any(
        str(path) in w and "unknown key 'models.ollama/q.context_windw'" in w for w in warned
    )


def test_plugin_options_without_the_project_file(modelplug_config_dir: Path) -> None:
    write_user(modelplug_config_dir, "[prices]\nupdate_interval = 600\n")
    Path("modelplug.toml").write_text(
        "[prices]\nlive_updates = true\nupdate_interval = 60\n[fallback]\nretries = 1\n"
    )
    settings, _ = load(explicit={"prices": {"live_updates": False}})
    # A cloned project must not switch on what reaches the network.
    assert settings.plugin_options("prices", project=False) == {
        "update_interval": 600,
        "live_updates": False,
    }
    assert settings.plugin_options("modelplug-prices") == {
        "update_interval": 60,
        "live_updates": False,
    }
    assert settings.plugin_options("fallback", project=False) == {}


def test_a_section_a_plugin_declares_is_no_unknown_section(modelplug_config_dir: Path) -> None:
    write_user(modelplug_config_dir, '[groups.fast]\ndeployments = ["echo"]\n')

    class Declares:
        modelplug_sections = ("groups",)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Client(entry_points=False)
        Client(entry_points=False, plugins=[Declares()])
    said = [str(w.message) for w in caught if "unknown settings section [groups]" in str(w.message)]
    assert len(said) == 1  # from the first client only


def test_a_section_a_plugin_declares_in_modelplug_sections_is_not_unknown(
    modelplug_config_dir: Path,
) -> None:
    write_user(modelplug_config_dir, '[deadlines.nightly]\nslow = "a/b"\n[nobodys]\nx = 1\n')

    class Declares:
        modelplug_sections = ("deadlines",)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Client(plugins=[Declares()], entry_points=False)
    said = [str(w.message) for w in caught]
    assert not any("[deadlines]" in m for m in said)
    assert any("unknown settings section [nobodys]" in m for m in said)
