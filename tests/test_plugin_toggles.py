"""Plugins are switched on and off per layer (user, project, environment, explicit), and a
disabled plugin's module is never imported."""

from __future__ import annotations

import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest
from modelplug.client.client import Client
from modelplug.contract.errors import PluginLoadError
from modelplug.contract.settings import ModelplugWarning

RECORDER = """
import os
from pathlib import Path
from modelplug import hookimpl

Path(os.environ["RECORDER_MARK"]).write_text("imported")

@hookimpl
def modelplug_providers():
    from modelplug import Provider

    return [Provider(name="recorded", type="recorded")]
"""


def make_distribution(root: Path, dist: str, module: str, source: str) -> None:
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist.replace('-', '_')}-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.2.3\n")
    (info / "entry_points.txt").write_text(f"[modelplug]\n{dist} = {module}\n")


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, modelplug_config_dir: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    make_distribution(site, "modelplug-recorder", "recorder_plugin", RECORDER)
    make_distribution(
        site, "modelplug-broken", "broken_plugin", "raise ImportError('needs libfoo 2')\n"
    )
    make_distribution(
        site,
        "modelplug-typo",
        "typo_plugin",
        "from modelplug import hookimpl\n@hookimpl\ndef modelplug_reslove(spec):\n    return None\n",
    )
    mark = tmp_path / "recorder-imported"
    monkeypatch.setenv("RECORDER_MARK", str(mark))
    monkeypatch.syspath_prepend(str(site))
    for name in ("recorder_plugin", "broken_plugin", "typo_plugin"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return mark


def client_quietly(**kwargs: Any) -> tuple[Client, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        client = Client(**kwargs)
    return client, [str(w.message) for w in caught if issubclass(w.category, ModelplugWarning)]


def info(client: Client, name: str) -> Any:
    return next(p for p in client.plugins() if p.name == name)


def test_installed_plugin_is_discovered_through_its_entry_point(installed: Path) -> None:
    client, _ = client_quietly()
    recorder = info(client, "modelplug-recorder")
    assert recorder.enabled and recorder.source == "entry point" and recorder.version == "1.2.3"
    assert recorder.hooks == ["modelplug_providers"]
    assert "recorded" in client.providers()
    assert installed.read_text() == "imported"


@pytest.mark.parametrize(
    "name", ["recorder", "modelplug-recorder", "modelplug_recorder", "Recorder"]
)
def test_disabled_plugin_is_never_imported(
    installed: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv("MODELPLUG_DISABLE", name)
    client, _ = client_quietly()
    recorder = info(client, "modelplug-recorder")
    assert not recorder.enabled
    assert recorder.reason == "disabled by MODELPLUG_DISABLE"
    assert not installed.exists()
    assert "recorder_plugin" not in sys.modules


def test_empty_allow_list_in_the_environment_means_no_plugins(
    installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODELPLUG_PLUGINS", "")
    client, warned = client_quietly()
    assert [p.name for p in client.plugins() if p.enabled] == [
        "config",
        "echo",
        "classify",
        "repetition",
    ]
    assert not installed.exists()
    assert warned == []  # the broken plugin was never imported either


def test_project_file_toggles_and_later_layers_win(
    installed: Path, modelplug_config_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (modelplug_config_dir / "config.toml").write_text('[plugins]\ndisable = ["recorder"]\n')
    project = Path.cwd()
    (project / "pyproject.toml").write_text('[tool.modelplug.plugins]\nenable = ["recorder"]\n')
    client, _ = client_quietly()
    recorder = info(client, "modelplug-recorder")
    assert recorder.enabled
    assert recorder.reason.startswith("in the enable list [plugins] enable of the project file")
    assert not info(client, "modelplug-broken").enabled  # not in the project's allow-list

    monkeypatch.setenv("MODELPLUG_DISABLE", "recorder")
    client, _ = client_quietly()
    assert info(client, "modelplug-recorder").reason == "disabled by MODELPLUG_DISABLE"

    client, _ = client_quietly(enable=["recorder"])
    assert info(client, "modelplug-recorder").enabled
    assert info(client, "modelplug-recorder").reason == "in the enable list Client(enable=...)"

    client, _ = client_quietly(enable=["recorder"], disable=["modelplug-recorder"])
    assert info(client, "modelplug-recorder").reason == "disabled by Client(disable=...)"


def test_modelplug_toml_is_a_project_file_too(installed: Path) -> None:
    (Path.cwd() / "modelplug.toml").write_text(
        '[plugins]\ndisable = ["recorder", "broken", "typo"]\n'
    )
    client, warned = client_quietly()
    assert not info(client, "modelplug-recorder").enabled
    assert warned == []


def test_plugin_that_fails_to_import_is_skipped_with_a_warning(installed: Path) -> None:
    client, warned = client_quietly()
    broken = info(client, "modelplug-broken")
    assert not broken.enabled
    assert broken.error == "ImportError: needs libfoo 2"
    assert any("'modelplug-broken'" in w and "needs libfoo 2" in w for w in warned)


def test_plugin_with_an_unknown_hook_fails_validation(installed: Path) -> None:
    client, warned = client_quietly()
    typo = info(client, "modelplug-typo")
    assert not typo.enabled
    assert typo.error is not None and "modelplug_reslove" in typo.error
    assert any("'modelplug-typo'" in w for w in warned)


def test_strict_plugins_make_a_load_failure_fatal(
    installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODELPLUG_STRICT_PLUGINS", "1")
    with pytest.raises(PluginLoadError, match="needs libfoo 2"):
        client_quietly()


def test_listing_as_json_has_the_documented_fields(
    installed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from modelplug.cli import main

    monkeypatch.setenv("MODELPLUG_DISABLE", "broken,typo")
    assert main(["plugins", "--json", "--all"]) == 0
    rows = json.loads(capsys.readouterr().out)
    by_name = {row["name"]: row for row in rows}
    assert set(by_name["modelplug-recorder"]) >= {
        "name",
        "version",
        "source",
        "hooks",
        "enabled",
        "reason",
    }
    assert by_name["modelplug-recorder"]["hooks"] == ["modelplug_providers"]
    assert by_name["modelplug-broken"]["enabled"] is False
    assert by_name["modelplug-broken"]["reason"] == "disabled by MODELPLUG_DISABLE"
    assert by_name["echo"]["source"] == "builtin"


def test_builtins_can_be_disabled_explicitly(modelplug_config_dir: Path) -> None:
    client = Client(entry_points=False, disable=["echo"])
    assert "echo" not in client.providers()
