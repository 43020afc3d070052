"""The guide to writing a provider (docs/writing-a-provider.md), its template and
`modelplug new-plugin`: the guide shows the template's files verbatim, the template's
own tests pass (the conformance suite among them), and so do those of a plugin that
`new-plugin` writes under another name."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from modelplug.cli.scaffold import TEMPLATE, create

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "writing-a-provider.md"
BLOCK = re.compile(r'```\w+ title="([^"]+)"\n(.*?)```\n', re.S)


def guide_files() -> dict[str, str]:
    """Each file the guide shows, its fragments joined in the order they appear."""
    files: dict[str, str] = {}
    for title, text in BLOCK.findall(GUIDE.read_text(encoding="utf-8")):
        files[title] = files.get(title, "") + text
    return files


def run_tests(plugin: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(plugin / "src")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider"],
        cwd=plugin,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_guide_shows_every_file_of_the_template_verbatim():
    shown = guide_files()
    assert set(shown) == {
        "pyproject.toml",
        "src/modelplug_acme/__init__.py",
        "tests/test_acme.py",
        "tests/recordings/acme_text.sse",
        "tests/recordings/acme_tool.sse",
    }
    for name, text in shown.items():
        assert text == (TEMPLATE / name).read_text(encoding="utf-8"), f"{name} differs"


def test_the_template_is_under_two_hundred_lines_with_its_tests():
    code = [TEMPLATE / "src/modelplug_acme/__init__.py", TEMPLATE / "tests/test_acme.py"]
    assert sum(len(p.read_text().splitlines()) for p in code) < 200


def test_the_templates_tests_pass_the_conformance_suite_included(tmp_path):
    done = run_tests(create("acme", tmp_path))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert re.search(r"\b17 passed\b", done.stdout)


def test_new_plugin_writes_a_working_plugin_under_another_name(tmp_path):
    plugin = create("work-llm", tmp_path)
    module = plugin / "src" / "modelplug_work_llm" / "__init__.py"
    assert 'TYPE = "work-llm"' in module.read_text()
    assert 'KEY_ENV = "WORK_LLM_API_KEY"' in module.read_text()
    assert 'modelplug-work-llm = "modelplug_work_llm"' in (plugin / "pyproject.toml").read_text()
    assert (plugin / "tests" / "recordings" / "work_llm_text.sse").exists()
    done = run_tests(plugin)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert re.search(r"\b17 passed\b", done.stdout)


@pytest.mark.parametrize("name", ["Acme", "1api", "my_api", "my--api", ""])
def test_new_plugin_refuses_a_name_that_is_not_one_and_says_what_is(tmp_path, name):
    with pytest.raises(ValueError, match="lowercase letters, digits and single hyphens"):
        create(name, tmp_path)


def test_the_new_plugin_command_writes_it_and_says_what_to_run(tmp_path, capsys):
    from modelplug.cli import main

    assert main(["new-plugin", "my-api", str(tmp_path)]) == 0
    assert (tmp_path / "modelplug-my-api" / "src" / "modelplug_my_api" / "__init__.py").exists()
    assert "pip install -e '.[test]' && pytest" in capsys.readouterr().out
    assert main(["new-plugin", "My_API", str(tmp_path)]) == 2
    assert "lowercase letters" in capsys.readouterr().err


def test_new_plugin_never_writes_over_a_directory(tmp_path):
    create("acme", tmp_path)
    with pytest.raises(ValueError, match="already exists"):
        create("acme", tmp_path)


def test_new_plugin_takes_the_distribution_name_for_the_provider_s(tmp_path, capsys):
    from modelplug.cli import main

    assert main(["new-plugin", "modelplug-foo", str(tmp_path)]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["modelplug-foo"]
    plugin = tmp_path / "modelplug-foo"
    assert 'TYPE = "foo"' in (plugin / "src" / "modelplug_foo" / "__init__.py").read_text()
    assert 'name = "modelplug-foo"' in (plugin / "pyproject.toml").read_text()
    assert f"wrote {plugin}:" in capsys.readouterr().out
    assert main(["new-plugin", "modelplug-", str(tmp_path)]) == 2
    assert "'modelplug-' is not a plugin name" in capsys.readouterr().err
