"""Every code block of the README and of docs/ is run, so no example rots.

By language: ``python`` blocks run as a new user would run them, each in a fresh Python
process in an empty directory with settings of its own; ``sh`` lines that start with
``modelplug`` run through the CLI the same way; ``toml`` blocks parse, and a settings
file loads without a warning; ``text`` blocks are output, not code. A block another test
runs (an adapter file, a test file, the provider guide's template) is claimed by that
test below. A Markdown comment just before a block sets it up:

- ``<!-- docs-test: serve NAME TYPE RECORDING -->``: a loopback server answers every
  request with the recorded bytes of RECORDING (a path in this repository), and the
  user's settings point the provider NAME (of TYPE) at it, with no key (``api_key_env =
  ""``, which also stands for a preset's variable) — so an example that calls a real
  provider runs as written, with no network and no key.
  ``<!-- docs-test: anthropic -->`` is short for Anthropic's recorded stream.
- ``<!-- docs-test: gateway NAME TYPE RECORDING -->``: as ``serve``, and a real
  ``modelplug gateway serve`` runs on those settings with the key the examples use
  (``sk-my-gateway-key``); the block's ``127.0.0.1:4000`` is the port it listens on.
- ``<!-- docs-test: skip REASON -->``: not runnable here; the reason is required and
  names what the block needs (real credentials, a running service).
- ``<!-- docs-test: prints -->`` before a ``text`` block right after a ``python`` block:
  what that example prints, exactly.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(
    # A fence of four backticks or more may hold a block of three (a text example of
    # Markdown): it ends at a fence as long as its own.
    r"(?:<!-- docs-test: (?P<directive>[^>]*?) -->\n+)?"
    r"(?P<fence>`{3,})(?P<lang>[\w-]*)\n(?P<body>.*?)(?P=fence)",
    re.DOTALL,
)
# Blocks other tests run, by their first line (or a whole page), and which test runs them.
CLAIMED_PAGES = {"docs/writing-a-provider.md": "tests/test_provider_guide.py"}
CLAIMED_BLOCKS = {
    "# my_lab.py": "tests/test_readme_examples.py",
    "# test_lab_server.py, run from the repository root": "tests/test_readme_examples.py",
    "# tests/test_conformance.py": "tests/test_readme_examples.py",
}
# Commands CI itself runs (the README's Develop commands), and pip lines, which
# tests/test_readme_install_lines.py checks against the distributions (and the virtual
# environment the README makes for them, which it runs).
CI_COMMANDS = ("python3 .ci/install.py", ".venv/bin/tox", "tox")
VENV_COMMANDS = ("python3 -m venv .venv", ". .venv/bin/activate")
OUTPUT_LANGS = {"text"}
ANTHROPIC_RECORDING = ROOT / "plugins/modelplug-anthropic/tests/recordings/basic_data_only.sse"
GATEWAY_KEY = "sk-my-gateway-key"
GATEWAY_ADDRESS = "127.0.0.1:4000"


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    body: str
    directive: str | None

    @property
    def first(self) -> str:
        return self.body.split("\n", 1)[0]

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def blocks() -> Iterator[Block]:
    for page in PAGES:
        text = page.read_text()
        rel = str(page.relative_to(ROOT))
        if rel in CLAIMED_PAGES:
            continue
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start("lang")) + 1
            yield Block(rel, line, match["lang"], match["body"], match["directive"])


ALL = list(blocks())


def of(*langs: str) -> list[Any]:
    return [pytest.param(b, id=str(b)) for b in ALL if b.lang in langs]


def test_every_block_names_its_language() -> None:
    unnamed = [str(b) for b in ALL if not b.lang]
    assert not unnamed, f"say what each block is (python, sh, toml, text): {unnamed}"


def test_every_block_is_of_a_language_these_tests_run() -> None:
    known = {"python", "sh", "toml", *OUTPUT_LANGS}
    odd = [f"{b} ({b.lang})" for b in ALL if b.lang and b.lang not in known]
    assert not odd, odd


def test_the_claiming_tests_exist() -> None:
    for test in {*CLAIMED_BLOCKS.values(), *CLAIMED_PAGES.values()}:
        assert (ROOT / test).exists(), test


@pytest.fixture
def user_home(tmp_path: Path) -> dict[str, str]:
    """An environment of a new user: an empty home, an empty settings file."""
    home = tmp_path / "home"
    home.mkdir()
    config = home / "config.toml"
    config.write_text("")
    return {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "MODELPLUG_CONFIG": str(config),
        "MODELPLUG_DATA_DIR": str(home / "data"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }


@pytest.fixture
def gateways() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Gateways a block's directive started, stopped after the test."""
    started: list[subprocess.Popen[bytes]] = []
    try:
        yield started
    finally:
        for process in started:
            process.terminate()
            process.wait(timeout=30)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_gateway(env: dict[str, str], gateways: list[subprocess.Popen[bytes]]) -> str:
    """A real gateway on the user's settings; returns the address it listens on."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "modelplug.cli", "gateway", "serve", "--port", str(port)],
        env={**env, "MODELPLUG_GATEWAY_KEY": GATEWAY_KEY},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    gateways.append(process)
    address = f"127.0.0.1:{port}"
    deadline = time.monotonic() + 60  # a bound for a loaded machine, not a timing check
    while time.monotonic() < deadline:
        assert process.poll() is None, "the gateway exited as it started"
        try:
            with urllib.request.urlopen(f"http://{address}/health", timeout=2):
                return address
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the gateway did not answer /health within a minute")


def set_up(
    block: Block,
    env: dict[str, str],
    wire_server: Any,
    gateways: list[subprocess.Popen[bytes]],
) -> str:
    """Prepare what the block's directive asks for; returns the block as it is run."""
    directive = (block.directive or "").strip()
    if directive.startswith("skip"):
        reason = directive[4:].strip()
        assert reason, f"{block}: a skipped block says why"
        pytest.skip(reason)
    if directive == "anthropic":
        directive = f"serve anthropic anthropic {ANTHROPIC_RECORDING.relative_to(ROOT)}"
    word, _, rest = directive.partition(" ")
    if word in ("serve", "gateway"):
        name, kind, recording = rest.split()
        for _ in range(8):
            wire_server.add_file(str(ROOT / recording))
        with open(env["MODELPLUG_CONFIG"], "a") as config:
            # api_key_env = "": no key anywhere, even for a preset that names a variable
            config.write(
                f'[providers.{name}]\ntype = "{kind}"\nbase_url = "{wire_server.url}"\n'
                'api_key_env = ""\n'
            )
        env.setdefault("SERVED", "")
        env["SERVED"] += name
        if word == "gateway":
            assert GATEWAY_ADDRESS in block.body, f"{block}: the example names no gateway"
            return block.body.replace(GATEWAY_ADDRESS, start_gateway(env, gateways))
    elif directive:
        raise AssertionError(f"{block}: unknown docs-test directive {directive!r}")
    return block.body


def printed_by(block: Block) -> Block | None:
    """The ``text`` block that says what ``block`` prints: the next block of its page,
    marked ``<!-- docs-test: prints -->``."""
    later = [b for b in ALL if b.page == block.page and b.line > block.line]
    following = min(later, key=lambda b: b.line, default=None)
    if following is not None and (following.directive or "").strip() == "prints":
        return following
    return None


def test_every_prints_block_is_the_text_after_a_python_block() -> None:
    prints = [b for b in ALL if (b.directive or "").strip() == "prints"]
    shown = {str(printed_by(b)) for b in ALL if b.lang == "python" and printed_by(b)}
    assert prints, "no example says what it prints"
    assert [str(b) for b in prints if b.lang != "text" or str(b) not in shown] == []


@pytest.mark.parametrize("block", of("python"))
def test_python_block_runs(
    block: Block,
    user_home: dict[str, str],
    wire_server: Any,
    gateways: list[subprocess.Popen[bytes]],
    tmp_path: Path,
) -> None:
    if block.first in CLAIMED_BLOCKS:
        pytest.skip(f"run by {CLAIMED_BLOCKS[block.first]}")
    body = set_up(block, user_home, wire_server, gateways)
    script = tmp_path / "example.py"
    script.write_text(body)
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=user_home,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{block} failed:\n{done.stderr[-3000:]}"
    shown = printed_by(block)
    if shown is not None:
        assert done.stdout == shown.body, f"{block} does not print what {shown} shows"
    if "SERVED" in user_home:
        assert done.stdout.strip(), f"{block}: the recorded answer's text is printed"


def commands(block: Block) -> Iterator[str]:
    text = block.body.replace("\\\n", " ")
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            yield line


@pytest.mark.parametrize("block", of("sh"))
def test_shell_block_runs(
    block: Block,
    user_home: dict[str, str],
    wire_server: Any,
    gateways: list[subprocess.Popen[bytes]],
    tmp_path: Path,
) -> None:
    body = set_up(block, user_home, wire_server, gateways)
    for line in commands(replace(block, body=body)):
        for command in (c.strip() for c in line.split("&&")):
            words = shlex.split(command)
            program = Path(words[0]).name if words else ""
            if command.startswith(CI_COMMANDS) or words[:2] == ["pip", "install"]:
                continue  # CI runs these / tests/test_readme_install_lines.py checks them
            if command in VENV_COMMANDS:
                continue  # tests/test_readme_install_lines.py runs them
            if program in ("python", "python3") and words[1].startswith(("bench/", "tools/")):
                # A benchmark or a maintainer's tool: too slow or too sweeping to run
                # here, but it must exist where the docs say.
                assert (ROOT / words[1]).is_file(), f"{block}: no {words[1]}"
                continue
            assert program == "modelplug", f"{block}: the docs tests do not run {command!r}"
            done = subprocess.run(
                [sys.executable, "-m", "modelplug.cli", *words[1:]],
                capture_output=True,
                text=True,
                cwd=tmp_path,
                env=user_home,
                timeout=120,
                check=False,
            )
            assert done.returncode == 0, f"{block}: {command!r} failed:\n{done.stderr[-3000:]}"


@pytest.mark.parametrize("block", of("toml"))
def test_toml_block_parses_and_settings_load_cleanly(block: Block, tmp_path: Path) -> None:
    data = tomllib.loads(block.body)
    if block.first.startswith("# pyproject.toml"):
        assert "tool" in data or "project" in data
        return
    if block.first.startswith("# ~/.codex/config.toml"):  # another program's settings
        assert "model_providers" in data
        return
    if block.first.startswith("# task.toml"):
        from modelplug.cli.bench.tasks import load_task

        (tmp_path / "task.toml").write_text(block.body)
        assert load_task(tmp_path).check  # a bench task (docs/bench.md), not settings
        return
    from modelplug import Client

    config = tmp_path / "config.toml"
    config.write_text(block.body)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Client(user_config=config, environ={"HOME": str(tmp_path)}).close()
