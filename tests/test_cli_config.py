"""``modelplug config path`` prints the user's settings file; ``modelplug config edit``
opens it in $VISUAL / $EDITOR, making it (owner-only, with a commented starter) first."""

from __future__ import annotations

import json
import shlex
import stat
import sys
import tomllib
from pathlib import Path

import pytest
from modelplug.cli import main

# The editor: records the path it was given, the file's text and its mode, then exits
# with the code the test asks for.
EDITOR = """\
import json, os, stat, sys
path = sys.argv[-1]
record = {"argv": sys.argv[1:], "text": open(path).read(),
          "mode": stat.S_IMODE(os.stat(path).st_mode),
          "dir_mode": stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode)}
open(os.environ["EDITOR_RECORD"], "w").write(json.dumps(record))
sys.exit(int(os.environ.get("EDITOR_EXIT", "0")))
"""


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake editor as $VISUAL; returns the file where it writes what it saw."""
    script = tmp_path / "editor.py"
    script.write_text(EDITOR)
    record = tmp_path / "editor-record.json"
    monkeypatch.setenv("VISUAL", f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}")
    monkeypatch.setenv("EDITOR_RECORD", str(record))
    return record


def test_config_path_prints_the_user_settings_file(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["config", "path"]) == 0
    assert capsys.readouterr().out == f"{modelplug_config_dir / 'config.toml'}\n"


def test_config_edit_creates_a_missing_file_owner_only_and_opens_it(
    tmp_path: Path,
    modelplug_config_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    editor: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = tmp_path / "fresh" / "modelplug" / "config.toml"
    monkeypatch.setenv("MODELPLUG_CONFIG", str(target))
    assert main(["config", "edit"]) == 0
    seen = json.loads(editor.read_text())
    assert seen["argv"] == [str(target)]
    assert seen["mode"] == 0o600 and seen["dir_mode"] == 0o700
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    # The starter shows the lines that point a provider at a server, and sets nothing.
    assert "[providers.llamacpp]" in seen["text"] and "base_url" in seen["text"]
    assert tomllib.loads(seen["text"]) == {}
    assert f"created {target}" in capsys.readouterr().err


def test_config_edit_opens_an_existing_file_as_it_is(
    modelplug_config_dir: Path, editor: Path
) -> None:
    own = modelplug_config_dir / "config.toml"
    own.write_text('model = "echo"\n')
    assert main(["config", "edit"]) == 0
    seen = json.loads(editor.read_text())
    assert seen["argv"] == [str(own)] and seen["text"] == 'model = "echo"\n'


def test_config_edit_uses_editor_when_visual_is_unset(
    modelplug_config_dir: Path, editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    monkeypatch.setenv("EDITOR", os.environ["VISUAL"])
    monkeypatch.delenv("VISUAL")
    assert main(["config", "edit"]) == 0
    assert json.loads(editor.read_text())["argv"] == [str(modelplug_config_dir / "config.toml")]


def test_config_edit_opens_a_file_that_does_not_load(
    modelplug_config_dir: Path, editor: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The broken file is what the user wants to fix: the error is shown, the editor opens.
    (modelplug_config_dir / "config.toml").write_text("[providers.x]\nbase_url = 3\n")
    assert main(["config", "edit"]) == 0
    assert json.loads(editor.read_text())["argv"] == [str(modelplug_config_dir / "config.toml")]
    assert "providers.x" in capsys.readouterr().err


def test_config_edit_reports_an_editor_that_failed(
    modelplug_config_dir: Path, editor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDITOR_EXIT", "3")
    assert main(["config", "edit"]) == 1


def test_config_edit_names_the_fix_for_an_editor_that_is_not_there(
    modelplug_config_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("VISUAL", "no-such-editor-anywhere")
    assert main(["config", "edit"]) == 1
    err = capsys.readouterr().err
    assert "no-such-editor-anywhere" in err and "set VISUAL or EDITOR" in err


def test_config_without_an_action_is_a_usage_error(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["config"]) == 2
    assert "path or edit" in capsys.readouterr().err
