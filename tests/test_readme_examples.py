"""The examples of the docs pages that other code has to run (an adapter file loaded
as a plugin, test files run with the test kit) run as written; tests/test_docs_examples.py
runs every other block."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
README = "\n".join(
    p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
)


def python_block(first_line: str) -> str:
    for block in re.findall(r"```python\n(.*?)```", README, re.DOTALL):
        if block.startswith(first_line):
            return str(block)
    raise AssertionError(f"no python block starting with {first_line!r} in the README")


def test_the_in_house_adapter_runs_verbatim(tmp_path: Path, make_client: Any) -> None:
    (tmp_path / "my_lab.py").write_text(python_block("# my_lab.py"))
    sys.path.insert(0, str(tmp_path))
    try:
        import my_lab  # type: ignore[import-not-found]

        client = make_client(my_lab)
        events = list(client.stream("lab/any", "hi"))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("my_lab", None)
    shown = "".join(getattr(e, "text", "") for e in events if type(e).__name__ == "TextDelta")
    done = events[-1].response
    assert shown == done.text == "Hello from the lab"
    assert done.model == "lab/any"


def test_the_in_house_adapter_is_short() -> None:
    lines = [line for line in python_block("# my_lab.py").splitlines() if line.strip()]
    assert len(lines) <= 20


def test_the_adapter_reaches_the_cli_as_a_local_plugin(tmp_path: Path) -> None:
    (tmp_path / "my_lab.py").write_text(python_block("# my_lab.py"))
    config = tmp_path / "config.toml"
    config.write_text(f'trusted_projects = ["{tmp_path}"]\n')
    (tmp_path / "modelplug.toml").write_text('[plugins]\nlocal = ["my_lab"]\n')
    done = subprocess.run(
        [sys.executable, "-m", "modelplug.cli", "chat", "-m", "lab/any", "hi"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"MODELPLUG_CONFIG": str(config), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello from the lab"


def test_the_test_kit_snippet_runs(make_client: Any, wire_server: Any, monkeypatch: Any) -> None:
    monkeypatch.chdir(ROOT)
    namespace: dict[str, Any] = {}
    exec(python_block("# test_lab_server.py"), namespace)

    namespace["test_lab_server_answers"](make_client, wire_server)

    assert wire_server.pending == 0


def test_the_python_api_examples_run(capsys: Any) -> None:
    for first in (
        "import modelplug\n\n# Module-level",
        "import asyncio",
        "from modelplug import Client",
        "from pydantic import BaseModel",
    ):
        exec(python_block(first), {"__name__": "readme"})

    out = capsys.readouterr().out
    assert "Write a haiku about plugins" in out
    assert "Summarise this" in out
    assert "name='Largest city of France?' population=0 native" in out
