"""``modelplug gateway serve``: --no-auth only on a loopback host, a missing key is a
clear refusal, and ``[gateway]`` is read from the user's file, never a project file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from modelplug import load_settings
from modelplug_gateway.cli import is_loopback_host
from modelplug_gateway.settings import read_gateway


def run(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG")} | {
        "MODELPLUG_CONFIG": str(tmp_path / "none.toml"),
        "MODELPLUG_DATA_DIR": str(tmp_path / "data"),
        "MODELPLUG_PLUGINS": "modelplug-gateway",
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "modelplug", "gateway", "serve", *args],
        env=environ,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_no_auth_is_refused_on_an_address_others_can_reach(tmp_path: Path) -> None:
    done = run(["--no-auth", "--host", "0.0.0.0", "--port", "1"], tmp_path)
    assert done.returncode == 2
    assert "--no-auth is refused on 0.0.0.0" in done.stderr


def test_without_a_key_the_gateway_does_not_start(tmp_path: Path) -> None:
    done = run(["--port", "1"], tmp_path)
    assert done.returncode == 2
    assert "MODELPLUG_GATEWAY_KEY" in done.stderr


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("0.0.0.0", False),
        ("10.1.2.3", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


def test_a_project_file_cannot_set_gateway_settings(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text("[gateway]\nport = 4100\n")
    os.chmod(user, 0o600)
    project = tmp_path / "project"
    project.mkdir()
    (project / "modelplug.toml").write_text(
        '[gateway]\nport = 9999\nmodels = ["evil"]\nauth = "none"\n'
    )
    settings = load_settings(user_path=user, project_dir=project, environ={})
    assert settings.plugin_options("gateway")["port"] == 9999  # the project file was read
    options = read_gateway(settings)
    assert options.port == 4100
    assert options.models is None and options.auth == "key"


def test_without_a_key_but_with_virtual_keys_made_the_refusal_names_auth_keys(
    tmp_path: Path,
) -> None:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MODELPLUG")} | {
        "MODELPLUG_CONFIG": str(tmp_path / "none.toml"),
        "MODELPLUG_DATA_DIR": str(tmp_path / "data"),
        "MODELPLUG_PLUGINS": "modelplug-gateway",
    }
    made = subprocess.run(
        [sys.executable, "-m", "modelplug", "gateway", "keys", "create", "alice"],
        env=environ,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    done = run(["--port", "1"], tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[-1] == (
        "modelplug gateway: the gateway needs a key: the virtual keys in "
        f"{tmp_path / 'data' / 'gateway-keys.sqlite3'} are admitted with [gateway] auth = "
        f'"keys" in {tmp_path / "none.toml"} (modelplug gateway keys list shows them); or set '
        "MODELPLUG_GATEWAY_KEY (or [gateway] key_env) for one key of your own"
    )


def test_without_a_key_and_no_virtual_key_nothing_is_made_in_the_data_directory(
    tmp_path: Path,
) -> None:
    done = run(["--port", "1"], tmp_path)
    assert done.returncode == 2
    assert "set MODELPLUG_GATEWAY_KEY" in done.stderr and 'auth = "keys"' not in done.stderr
    assert not (tmp_path / "data" / "gateway-keys.sqlite3").exists()
