"""The keys file is this process's to close: a ``gateway keys`` command leaves no
descriptor of it open when it ends, and a gateway's shutdown (its lifespan closes its
Client: ``modelplug_close``) closes the one its key gate read."""

from __future__ import annotations

import os
from pathlib import Path

import openai
import pytest
from modelplug import Client
from modelplug.cli import main
from modelplug_gateway.app import create_app

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("MODELPLUG_PLUGINS", "MODELPLUG_DISABLE", "MODELPLUG_REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    user = tmp_path / "user.toml"
    user.write_text('[gateway]\nauth = "keys"\n')
    user.chmod(0o600)
    monkeypatch.setenv("MODELPLUG_CONFIG", str(user))
    monkeypatch.setenv("MODELPLUG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "data"


def held(data_dir: Path) -> list[str]:
    """The files of ``data_dir`` this process has a descriptor of."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # the listing's own descriptor, gone already
        if target.startswith(f"{data_dir}{os.sep}"):
            found.append(Path(target).name)
    return sorted(found)


def test_a_keys_command_leaves_no_descriptor_of_the_keys_file(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["gateway", "keys", "create", "alice"]) == 0
    assert capsys.readouterr().out.startswith("mpk-")
    assert (data_dir / "gateway-keys.sqlite3").exists()
    assert held(data_dir) == []


def test_a_gateway_s_shutdown_closes_the_keys_file_its_gate_read(
    data_dir: Path, capsys: pytest.CaptureFixture[str], serve: object
) -> None:
    assert main(["gateway", "keys", "create", "alice"]) == 0
    key = capsys.readouterr().out.strip()
    app = create_app(Client())
    with serve(app) as url:  # type: ignore[operator]
        caller = openai.OpenAI(base_url=url + "/v1", api_key=key, max_retries=0)
        answer = caller.chat.completions.create(
            model="echo", messages=[{"role": "user", "content": "hello"}]
        )
        assert answer.choices[0].message.content == "hello"
        assert "gateway-keys.sqlite3" in held(data_dir)  # the gate reads it while serving
    assert held(data_dir) == []
