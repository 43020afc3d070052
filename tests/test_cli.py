"""The modelplug command: output and exit codes (0 ok, 1 the call failed, 2 what was
given is wrong)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from modelplug.cli import main


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_chat_streams_the_reply_and_usage(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["chat", "-m", "echo", "--usage", "hello  there"], capsys)
    assert code == 0
    assert out == "hello  there\n"
    assert "echo/echo: input 2 output 2 cost $0" in err


def test_chat_reads_stdin(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("from stdin"))
    code, out, _ = run(["chat", "-m", "echo", "-"], capsys)
    assert (code, out) == (0, "from stdin\n")


def test_unknown_provider_exits_2_with_one_line(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["chat", "-m", "nowhere/m", "hi"], capsys)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and "Unknown provider 'nowhere'" in err
    assert "Traceback" not in err


def test_usage_errors_exit_2(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["price", "echo", "--input", "x"], capsys)[0] == 2
    assert run(["no-such-command"], capsys)[0] == 2
    assert run([], capsys)[0] == 2
    assert run(["price", "echo", "--input", "-1", "--output", "1"], capsys)[0] == 2


def test_resolve_json_has_no_key(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str], planted_key: str
) -> None:
    (modelplug_config_dir / "config.toml").write_text(
        '[providers.echo2]\ntype = "echo"\napi_key_env = "PLANTED_API_KEY"\nheaders = { X-Secret = "hdr-secret-value" }\n'
    )
    code, out, _ = run(["resolve", "echo", "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["name"] == "echo/echo" and data["endpoint"]["type"] == "echo"
    assert planted_key not in out and "hdr-secret-value" not in out


def test_price_prints_a_breakdown_or_how_to_set_one(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (modelplug_config_dir / "config.toml").write_text(
        '[models."echo/echo"]\nprice = { input = 3, output = 15, cache_read = 0.3, cache_write = 3.75 }\n'
    )
    code, out, _ = run(
        [
            "price",
            "echo",
            "--input",
            "1000",
            "--output",
            "500",
            "--cache-read",
            "200",
            "--cache-write",
            "100",
        ],
        capsys,
    )
    assert code == 0
    assert "input        $0.003" in out
    assert "output       $0.0075" in out
    assert "total        $0.010935" in out
    code, out, _ = run(["price", "echo", "--input", "1000", "--output", "500", "--batch"], capsys)
    assert "total        $0.00525" in out
    (modelplug_config_dir / "config.toml").write_text("")
    from modelplug.testing import FakeModel

    assert FakeModel  # the fake provider is not installed for the CLI: use echo with no price
    code, out, _ = run(["price", "echo", "--input", "1", "--output", "1"], capsys)
    assert code == 0 and "total        $0" in out


def test_plugins_lists_builtins_with_all(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["plugins", "--all"], capsys)
    assert code == 0
    lines = out.splitlines()
    echo = next(i for i, line in enumerate(lines) if line.split()[1:2] == ["echo"])
    assert "builtin" in lines[echo]
    hooks = lines[echo + 1].split("hooks:", 1)[1].replace(",", " ").split()
    assert {"providers", "resolve", "stream"} <= set(hooks)


@pytest.mark.parametrize(
    "args",
    [["--version"], ["plugins", "--all"], ["chat", "-m", "echo", "hello"]],
    ids=" ".join,
)
def test_a_closed_pipe_ends_the_command_quietly_as_sigpipe_would(
    args: list[str], modelplug_config_dir: Path
) -> None:
    import os
    import subprocess
    import sys

    # What `modelplug --version | head -1` meets when head has gone: a pipe with no
    # reader. Closed before the command starts, so its first write fails, every time.
    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "modelplug", *args],
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(writer)
    assert done.stderr == ""  # no BrokenPipeError traceback, no "Exception ignored"
    assert done.returncode == 141  # what a shell reports for `yes | head`'s yes
