"""Project-local plugin modules load only in a project the user trusts."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest
from modelplug.cli import main
from modelplug.client.client import Client


@pytest.fixture
def project(modelplug_config_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = Path.cwd()
    package = root / "inhouse"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "adapter.py").write_text(
        "from modelplug import hookimpl\n\n@hookimpl\ndef modelplug_providers():\n    from modelplug import Provider\n    return [Provider(name='inhouse', type='inhouse')]\n"
    )
    (root / "pyproject.toml").write_text('[tool.modelplug.plugins]\nlocal = ["inhouse.adapter"]\n')
    monkeypatch.delitem(sys.modules, "inhouse", raising=False)
    monkeypatch.delitem(sys.modules, "inhouse.adapter", raising=False)
    return root


def test_untrusted_project_does_not_load_its_plugins(project: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        client = Client(entry_points=False)
    assert "inhouse" not in client.providers()
    assert "inhouse.adapter" not in sys.modules
    assert any(f"modelplug trust {project}" in str(w.message) for w in caught)
    row = next(p for p in client.plugins() if p.name == "inhouse.adapter")
    assert (row.source, row.enabled) == ("local", False)


def test_trusted_project_loads_its_plugins(
    project: Path, modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = modelplug_config_dir / "config.toml"
    config.write_text('model = "echo"\n\n[aliases]\nx = "echo"\n')
    assert main(["trust", str(project)]) == 0
    assert "trusted" in capsys.readouterr().out
    text = config.read_text()
    assert text.index("trusted_projects") < text.index("[aliases]")  # kept before any table
    client = Client(entry_points=False)
    assert "inhouse" in client.providers()
    row = next(p for p in client.plugins() if p.name == "inhouse.adapter")
    assert (row.source, row.enabled, row.hooks) == ("local", True, ["modelplug_providers"])
    assert main(["trust", str(project)]) == 0  # trusting twice changes nothing
    assert config.read_text().count(str(project)) == 1


def test_a_project_cannot_trust_itself(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        f'[tool.modelplug]\ntrusted_projects = ["{project}"]\n[tool.modelplug.plugins]\nlocal = ["inhouse.adapter"]\n'
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        client = Client(entry_points=False)
    assert "inhouse" not in client.providers()
    assert any("ignored 'trusted_projects'" in str(w.message) for w in caught)
