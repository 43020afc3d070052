"""Where settings come from and the mistakes they refuse: the project file is looked for
up to the repository root or home only; a user file others can change is not used; a
base URL that carries a key, or a key pasted as api_key_env, is refused without
printing it."""

from __future__ import annotations

import os
import secrets
import warnings
from pathlib import Path
from typing import Any

import pytest
from modelplug.contract.errors import ConfigError
from modelplug.contract.secrets import redact
from modelplug.contract.settings import ModelplugWarning, check_base_url, looks_like_variable_name
from modelplug.host.settings import load_settings, project_search_dirs

PROJECT = 'model = "lab/from-project"\n'


def load(**kwargs: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        settings = load_settings(**kwargs)
    return settings, [str(w.message) for w in caught if issubclass(w.category, ModelplugWarning)]


# -- the project file ------------------------------------------------------------------


def test_a_project_file_in_a_shared_parent_is_not_every_projects_file(tmp_path: Path) -> None:
    # /tmp/modelplug.toml and a project below it with no repository of its own.
    (tmp_path / "modelplug.toml").write_text(PROJECT)
    work = tmp_path / "someone" / "work"
    work.mkdir(parents=True)
    settings, _ = load(user_path=tmp_path / "none.toml", project_dir=work, environ={})
    assert settings.model is None
    assert settings.project_dir is None


def test_the_project_file_is_found_up_to_the_repository_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "modelplug.toml").write_text(PROJECT)
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)
    settings, _ = load(user_path=tmp_path / "none.toml", project_dir=deep, environ={})
    assert settings.model == "lab/from-project"
    assert settings.project_dir == repo.resolve()


def test_the_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "modelplug.toml").write_text(PROJECT)  # above the repository: not used
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".git").write_text("gitdir: elsewhere\n")  # a worktree's .git is a file
    settings, _ = load(user_path=tmp_path / "none.toml", project_dir=repo, environ={})
    assert settings.model is None


def test_the_search_stops_at_the_home_directory(tmp_path: Path) -> None:
    home = tmp_path / "home" / "me"
    work = home / "notes" / "today"
    work.mkdir(parents=True)
    assert project_search_dirs(work, home) == [work, work.parent, home]
    assert project_search_dirs(work, tmp_path / "elsewhere") == [work]


# -- the user file ---------------------------------------------------------------------


posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")


@posix_only
def test_a_user_file_every_user_can_write_is_ignored_with_a_warning(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text('model = "lab/m"\n[providers.lab]\ntype = "x"\nbase_url = "https://a.b"\n')
    user.chmod(0o666)
    settings, warned = load(user_path=user, environ={}, use_project=False)
    assert settings.providers == {} and settings.model is None
    assert any("ignored your user settings file" in w and "chmod go-w" in w for w in warned)


@posix_only
def test_a_user_file_only_you_can_write_is_read(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text('model = "lab/m"\n')
    user.chmod(0o644)
    settings, warned = load(user_path=user, environ={}, use_project=False)
    assert settings.model == "lab/m"
    assert warned == []


@posix_only
def test_a_user_file_a_shared_group_can_write_is_read_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import modelplug.host.settings

    user = tmp_path / "config.toml"
    user.write_text('model = "lab/m"\n')
    user.chmod(0o664)
    monkeypatch.setattr(modelplug.host.settings, "_group_is_shared", lambda gid: True)
    settings, warned = load(user_path=user, environ={}, use_project=False)
    assert settings.model == "lab/m"
    assert any("not yours alone" in w and "chmod g-w" in w for w in warned)
    monkeypatch.setattr(modelplug.host.settings, "_group_is_shared", lambda gid: False)
    settings, warned = load(user_path=user, environ={}, use_project=False)
    assert settings.model == "lab/m" and warned == []  # your own private group


@posix_only
def test_a_credentials_file_others_can_write_gives_no_key(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text("")
    user.chmod(0o600)
    credentials = tmp_path / "credentials.toml"
    credentials.write_text('LAB_KEY = "sk-never-used-0123456789"\n')
    credentials.chmod(0o622)
    settings, _ = load(user_path=user, environ={}, use_project=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert settings.api_key("LAB_KEY", "lab", required=False) is None
    assert any("chmod 600" in str(w.message) for w in caught)


# -- base URLs that carry a key --------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    ["key=abc123", "api_key=abc123", "x=1&apiKey=abc", "api-key=abc", "access_token=t", "sig=s"],
)
def test_a_base_url_whose_query_carries_a_key_is_refused(query: str) -> None:
    secret_part = query.partition("=")[2]
    with pytest.raises(ConfigError) as caught:
        check_base_url(f"https://llm.example.com/v1?{query}", provider="lab")
    message = str(caught.value)
    assert "api_key_env" in message and "headers" in message
    assert f"={secret_part}" not in message and "llm.example.com" not in message


def test_a_base_url_with_a_harmless_query_is_kept() -> None:
    url = "https://llm.example.com/openai?api-version=2024-10-21"
    assert check_base_url(url) == url


def test_a_user_provider_with_a_key_in_its_base_url_is_a_settings_error(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text(
        '[providers.lab]\ntype = "openai-compatible"\n'
        'base_url = "https://llm.example.com/v1?key=AIzaSyD-secret-value"\n'
    )
    with pytest.raises(ConfigError, match="must not carry a key in its query") as caught:
        load_settings(user_path=user, environ={}, use_project=False)
    assert "AIzaSyD-secret-value" not in str(caught.value)


# -- a key pasted as api_key_env -------------------------------------------------------


@pytest.mark.parametrize("name", ["LAB_API_KEY", "OPENAI_API_KEY", "my_key", "_PRIVATE", "KEY2"])
def test_variable_names_look_like_variable_names(name: str) -> None:
    assert looks_like_variable_name(name)


@pytest.mark.parametrize(
    "pasted",
    [
        "sk-proj-" + secrets.token_urlsafe(24),
        "sk_live_" + secrets.token_hex(12),
        "AIzaSy" + secrets.token_hex(16),
        "aB3" + secrets.token_hex(12) + "Zq9",
        "Bearer abc",
    ],
    ids=["openai", "stripe-like", "google", "mixed-case", "with-space"],
)
def test_a_key_pasted_as_api_key_env_is_refused_without_printing_it(
    tmp_path: Path, pasted: str
) -> None:
    assert not looks_like_variable_name(pasted)
    user = tmp_path / "config.toml"
    user.write_text(
        f'[providers.lab]\ntype = "openai-compatible"\nbase_url = "https://a.example/v1"\n'
        f'api_key_env = "{pasted}"\n'
    )
    with pytest.raises(ConfigError, match="must be the NAME of an") as caught:
        load_settings(user_path=user, environ={}, use_project=False)
    assert pasted not in str(caught.value)
    if len(pasted) >= 12:
        # Registered as a secret: masked wherever else it turns up.
        assert pasted not in redact(f"echo {pasted}")


def test_api_key_refuses_a_variable_name_that_is_a_key(tmp_path: Path) -> None:
    settings = load_settings(user_path=tmp_path / "none.toml", environ={}, use_project=False)
    pasted = "sk-ant-api03-" + secrets.token_urlsafe(20)
    with pytest.raises(ConfigError) as caught:
        settings.api_key(pasted, "anthropic")
    assert pasted not in str(caught.value)
