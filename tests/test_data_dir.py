"""The data directory (``Settings.data_dir()``): where plugins keep what outlives one
process on this machine. The environment chooses it; no settings file does, and the
test kit gives every test its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import platformdirs
import pytest
from modelplug import Client
from modelplug.contract.settings import ModelplugWarning
from modelplug.host.settings import load_settings


def test_data_dir_is_the_platform_s_by_default(tmp_path: Path) -> None:
    settings = load_settings(user_path=tmp_path / "none.toml", environ={}, use_project=False)

    assert settings.data_dir() == Path(platformdirs.user_data_dir("modelplug"))


def test_data_dir_follows_modelplug_data_dir(tmp_path: Path) -> None:
    environ = {"MODELPLUG_DATA_DIR": str(tmp_path / "state")}

    settings = load_settings(user_path=tmp_path / "none.toml", environ=environ)

    assert settings.data_dir() == tmp_path / "state"


def test_no_settings_file_moves_the_data_dir(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text('data_dir = "/tmp/elsewhere"\n')
    project = tmp_path / "project"
    project.mkdir()
    (project / "modelplug.toml").write_text('data_dir = "/tmp/elsewhere"\n')

    with pytest.warns(ModelplugWarning, match="unknown key 'data_dir'"):
        settings = load_settings(user_path=user, project_dir=project, environ={})

    assert settings.data_dir() == Path(platformdirs.user_data_dir("modelplug"))


def test_the_test_kit_gives_each_test_its_own_data_dir(modelplug_config_dir: Path) -> None:
    client = Client(user_config=modelplug_config_dir / "config.toml", entry_points=False)

    assert client.settings.data_dir() == modelplug_config_dir.parent / "modelplug-data"
    assert client.settings.data_dir() != Path(platformdirs.user_data_dir("modelplug"))


def test_a_test_s_own_environment_keeps_its_own_data_dir(
    modelplug_config_dir: Path, make_client: Any
) -> None:
    client = make_client(environ={"SOME_KEY": "x"})

    assert client.settings.data_dir() == modelplug_config_dir.parent / "modelplug-data"
    assert client.settings.getenv("SOME_KEY") == "x"
