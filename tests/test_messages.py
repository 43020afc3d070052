"""Every message says what is wrong and what to do: tried through the real `modelplug`
command, in a subprocess, as a new user meets it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from modelplug.host.known_providers import example_spec


def modelplug(
    *args: str, home: Path, config: str | None = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m modelplug.cli`` with its own user file (``config`` is its text;
    None leaves MODELPLUG_CONFIG unset) in an empty project directory."""
    work = home / "work"
    work.mkdir(exist_ok=True)
    environ = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if config is not None:
        path = home / "config.toml"
        path.write_text(config)
        environ["MODELPLUG_CONFIG"] = str(path)
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "modelplug.cli", *args],
        capture_output=True,
        text=True,
        cwd=work,
        env=environ,
        check=False,
    )


def test_a_disabled_provider_plugin_is_not_called_missing(tmp_path: Path) -> None:
    done = modelplug(
        "resolve",
        example_spec("anthropic"),
        home=tmp_path,
        config='[plugins]\ndisable = ["anthropic"]\n',
    )
    assert done.returncode == 2
    assert "modelplug-anthropic is installed but off" in done.stderr
    assert "[plugins] disable of the user file" in done.stderr
    assert "pip install" not in done.stderr


def test_a_disabled_pricing_plugin_is_not_called_missing(tmp_path: Path) -> None:
    done = modelplug(
        "price",
        example_spec("anthropic"),
        "--input",
        "1",
        "--output",
        "1",
        home=tmp_path,
        env={"MODELPLUG_DISABLE": "prices"},
    )
    assert done.returncode == 0
    assert "modelplug-prices is installed but disabled by MODELPLUG_DISABLE" in done.stdout


def test_an_unknown_provider_gets_no_invented_distribution(tmp_path: Path) -> None:
    done = modelplug("resolve", "acme/large", home=tmp_path)
    assert done.returncode == 2
    assert "pip install" not in done.stderr
    assert "[providers]" in done.stderr


def test_a_spec_without_a_model_says_so_with_an_example(tmp_path: Path) -> None:
    done = modelplug("resolve", "anthropic/", home=tmp_path)
    assert done.returncode == 2
    assert "names no model" in done.stderr
    assert example_spec("anthropic") in done.stderr


@pytest.mark.parametrize("spec", [" ", "anthropic/ ", "echo /x"])
def test_a_spec_with_white_space_is_refused(tmp_path: Path, spec: str) -> None:
    done = modelplug("resolve", spec, home=tmp_path)
    assert done.returncode == 2
    assert "white space" in done.stderr or "names no model" in done.stderr


def test_surrounding_white_space_is_stripped(tmp_path: Path) -> None:
    done = modelplug("resolve", "  echo/x  ", home=tmp_path)
    assert done.returncode == 0
    assert done.stdout.startswith("echo/x ")


def test_modelplug_config_naming_a_missing_file_warns(tmp_path: Path) -> None:
    done = modelplug(
        "resolve",
        "echo",
        home=tmp_path,
        config=None,
        env={"MODELPLUG_CONFIG": str(tmp_path / "nope.toml")},
    )
    assert done.returncode == 0
    assert done.stderr.startswith("modelplug: warning: MODELPLUG_CONFIG names ")
    assert "does not exist" in done.stderr


def test_modelplug_config_naming_a_directory_is_an_error(tmp_path: Path) -> None:
    done = modelplug(
        "resolve", "echo", home=tmp_path, config=None, env={"MODELPLUG_CONFIG": str(tmp_path)}
    )
    assert done.returncode == 2
    assert "which is a directory" in done.stderr


@pytest.mark.parametrize(
    ("env", "config", "setting"),
    [
        ({"MODELPLUG_DISABLE": "antropic"}, "", "MODELPLUG_DISABLE"),
        ({"MODELPLUG_PLUGINS": "prices,fallbak"}, "", "MODELPLUG_PLUGINS"),
        ({}, '[plugins]\ndisable = ["textcall"]\n', "[plugins] disable of the user file"),
    ],
)
def test_an_unknown_plugin_name_in_a_toggle_warns_naming_the_installed_ones(
    tmp_path: Path, env: dict[str, str], config: str, setting: str
) -> None:
    done = modelplug("resolve", "echo", home=tmp_path, config=config, env=env)
    warnings = [
        line for line in done.stderr.splitlines() if "which is not an installed plugin" in line
    ]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"modelplug: warning: {setting}")
    assert "modelplug-textcalls" in warnings[0]


def test_every_warning_is_one_line_in_one_style(tmp_path: Path) -> None:
    credentials = tmp_path / "credentials.toml"
    credentials.write_text('LAB_KEY = "k-123456789"\n')
    credentials.chmod(0o644)
    config = (
        '[providers.lab]\ntype = "openai-compatible"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'api_key_env = "LAB_KEY"\n\n[nosuchplugin]\nx = 1\n'
    )
    done = modelplug("chat", "-m", "lab/m", "hi", home=tmp_path, config=config)
    lines = done.stderr.splitlines()
    warnings = [line for line in lines if "warning" in line]
    assert any("credentials file" in w for w in warnings)
    assert any("[nosuchplugin]" in w and "config.toml" in w for w in warnings)
    assert all(w.startswith("modelplug: warning: ") for w in warnings)
    assert not any(line.startswith("  ") for line in lines)  # no Python source line


def test_trust_does_not_warn_about_what_it_fixes(tmp_path: Path) -> None:
    project = tmp_path / "work"
    project.mkdir()
    (project / "modelplug.toml").write_text('[plugins]\nlocal = ["inhouse"]\n')
    done = modelplug("trust", str(project), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "not trusted" not in done.stderr
    assert "trusted" in done.stdout


def test_a_malformed_user_file_does_not_hide_the_plugins(tmp_path: Path) -> None:
    done = modelplug("plugins", home=tmp_path, config="model = [unclosed\n")
    assert done.returncode == 0
    assert "config.toml" in done.stderr
    assert "modelplug-anthropic" in done.stdout


def test_a_malformed_user_file_exits_2_elsewhere(tmp_path: Path) -> None:
    done = modelplug("resolve", "echo", home=tmp_path, config="model = [unclosed\n")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1


def test_version_prints_core_and_every_plugin(tmp_path: Path) -> None:
    done = modelplug("--version", home=tmp_path)
    lines = done.stdout.splitlines()
    assert done.returncode == 0
    assert lines[0].startswith("modelplug ")
    assert any(line.startswith("modelplug-anthropic ") for line in lines)


def test_a_local_plugin_stays_on_beside_an_enable_allow_list(tmp_path: Path) -> None:
    project = tmp_path / "work"
    project.mkdir()
    (project / "inhouse.py").write_text(
        "from modelplug import Provider, hookimpl\n"
        "@hookimpl\ndef modelplug_providers():\n    return [Provider(name='inhouse', type='inhouse')]\n"
    )
    (project / "pyproject.toml").write_text(
        '[tool.modelplug.plugins]\nenable = ["openai-compat"]\nlocal = ["inhouse"]\n'
    )
    done = modelplug("plugins", home=tmp_path, config=f'trusted_projects = ["{project}"]\n')
    row = next(line for line in done.stdout.splitlines() if "inhouse" in line)
    assert row.startswith("on ")
    anthropic = next(line for line in done.stdout.splitlines() if "modelplug-anthropic" in line)
    assert anthropic.startswith("off")
