"""``modelplug chat`` keeps each conversation in the user's data directory, readable by
the user only and holding no key, so ``-c/--continue`` carries on the last one in a
later run; ``-n/--no-log`` keeps nothing."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from modelplug.cli import main


def modelplug(
    tmp_path: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "config.toml"
    if not config.exists():
        config.write_text("")
    environ = {
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "MODELPLUG_CONFIG": str(config),
        "MODELPLUG_DATA_DIR": str(tmp_path / "data"),
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "modelplug", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=environ,
        timeout=120,
        check=False,
        # A umask that would leave everything world-readable: the files must not be.
        preexec_fn=lambda: os.umask(0),
    )


def stored(tmp_path: Path) -> list[dict[str, Any]]:
    folder = tmp_path / "data" / "conversations"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def test_continue_sends_the_last_conversation_back(tmp_path: Path) -> None:
    first = modelplug(tmp_path, "chat", "-m", "echo", "-s", "Be brief.", "alpha beta")
    assert (first.returncode, first.stdout) == (0, "alpha beta\n")
    # No -m or -s: the conversation's own model and system prompt; echo counts every
    # text block sent (the system prompt 2, the first turn 2 + 2, this one 1).
    again = modelplug(tmp_path, "chat", "-c", "--usage", "gamma")
    assert (again.returncode, again.stdout) == (0, "gamma\n")
    assert again.stderr == "echo/echo: input 7 output 1 cost $0\n"
    (conversation,) = stored(tmp_path)
    assert conversation["model"] == "echo" and conversation["system"] == "Be brief."
    assert [(m["role"], m["content"][0]["text"]) for m in conversation["messages"]] == [
        ("user", "alpha beta"),
        ("assistant", "alpha beta"),
        ("user", "gamma"),
        ("assistant", "gamma"),
    ]


def test_continue_works_in_the_interactive_chat(tmp_path: Path) -> None:
    modelplug(tmp_path, "chat", "-m", "echo", "one")
    done = modelplug(tmp_path, "chat", "--continue", "--usage", stdin="two\nthree\n")
    assert (done.returncode, done.stdout) == (0, "two\nthree\n")
    assert done.stderr.splitlines() == [
        "echo/echo: input 3 output 1 cost $0",
        "echo/echo: input 5 output 1 cost $0",
        "cost: $0 (2 calls, 10 tokens)",  # the chat's total
    ]
    assert len(stored(tmp_path)[0]["messages"]) == 6


def test_a_new_chat_starts_a_new_conversation_and_continue_takes_the_newest(
    tmp_path: Path,
) -> None:
    modelplug(tmp_path, "chat", "-m", "echo", "old")
    modelplug(tmp_path, "chat", "-m", "echo", "new")
    done = modelplug(tmp_path, "chat", "-c", "--usage", "more")
    assert done.stderr == "echo/echo: input 3 output 1 cost $0\n"  # new, new, more
    assert sorted(len(c["messages"]) for c in stored(tmp_path)) == [2, 4]


def test_no_log_stores_nothing_and_leaves_the_last_conversation_as_it_was(
    tmp_path: Path,
) -> None:
    modelplug(tmp_path, "chat", "-m", "echo", "kept")
    done = modelplug(tmp_path, "chat", "-n", "-m", "echo", "not kept")
    assert (done.returncode, done.stdout) == (0, "not kept\n")
    modelplug(tmp_path, "chat", "--no-log", "-c", "also not kept")
    (conversation,) = stored(tmp_path)
    assert [m["content"][0]["text"] for m in conversation["messages"]] == ["kept", "kept"]


def test_conversations_are_readable_by_the_user_only(tmp_path: Path) -> None:
    modelplug(tmp_path, "chat", "-m", "echo", "private")
    folder = tmp_path / "data" / "conversations"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = list(folder.iterdir())
    assert files and {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o600}


def test_a_conversation_never_holds_a_key(
    tmp_path: Path, wire_server: Any, planted_key: str
) -> None:
    (tmp_path / "config.toml").write_text(
        f'[providers.lab]\ntype = "openai-compatible"\nbase_url = "{wire_server.url}/v1"\n'
        'api_key_env = "PLANTED_API_KEY"\n'
    )
    wire_server.add_file(Path(__file__).parent / "recordings" / "chat_text.sse")
    done = modelplug(
        tmp_path,
        "chat",
        "-m",
        "lab/m",
        "-o",
        "temperature=0.1",
        f"is {planted_key} my key?",
        env={"PLANTED_API_KEY": planted_key},
    )
    assert done.returncode == 0, done.stderr
    assert wire_server.requests[0].headers["authorization"] == f"Bearer {planted_key}"
    text = next((tmp_path / "data" / "conversations").glob("*.json")).read_text()
    assert planted_key not in text
    assert "is *** my key?" in text
    assert "temperature" not in text  # request options are not part of a conversation


def test_continue_with_nothing_to_continue_says_how_to_start(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chat", "-c", "hello"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("modelplug: no conversation to continue yet")
    assert "start one without -c/--continue" in err


def test_a_conversation_that_cannot_be_read_names_its_file_and_the_way_out(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chat", "-m", "echo", "hello"]) == 0
    folder = Path(os.environ["MODELPLUG_DATA_DIR"]) / "conversations"
    (path,) = folder.glob("*.json")
    path.write_text('{"id": "x", "messages": [{"role": "robot"}]}')
    capsys.readouterr()
    assert main(["chat", "-c", "again"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "move it away or start a new one" in err


def test_schema_answers_one_prompt_only(
    modelplug_config_dir: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": "object", "properties": {"a": {"type": "string"}}}')
    assert main(["chat", "-m", "echo", "--schema", str(schema), "-c", "hi"]) == 2
    assert "--schema answers one prompt" in capsys.readouterr().err


def test_a_conversation_that_cannot_be_stored_is_a_warning_naming_the_way_out(
    tmp_path: Path,
) -> None:
    (tmp_path / "data").write_text("a file where the data directory should be")
    done = modelplug(tmp_path, "chat", "-m", "echo", "still answered")
    assert (done.returncode, done.stdout) == (0, "still answered\n")
    (warning,) = [w for w in done.stderr.splitlines() if "could not store" in w]
    assert warning.startswith("modelplug: warning: could not store the conversation in ")
    assert warning.endswith("set MODELPLUG_DATA_DIR to a writable directory, or use -n")


def listed(tmp_path: Path) -> list[str]:
    done = modelplug(tmp_path, "chat", "--list")
    assert (done.returncode, done.stderr) == (0, "")
    return done.stdout.splitlines()


def test_list_shows_every_conversation_the_last_first_and_which_one_c_continues(
    tmp_path: Path,
) -> None:
    assert listed(tmp_path) == [
        f"no conversations yet in {tmp_path / 'data' / 'conversations'}; modelplug chat "
        "stores each one (not with -n)"
    ]
    modelplug(tmp_path, "chat", "-m", "echo", "the  first\nquestion")
    modelplug(tmp_path, "chat", "-m", "echo", "x" * 60)
    newest, oldest = listed(tmp_path)
    ids = {c["messages"][0]["content"][0]["text"]: c["id"] for c in stored(tmp_path)}
    assert newest.startswith(ids["x" * 60] + "  ")
    assert newest.endswith(f'  echo  2 messages  "{"x" * 49}…"  (last: -c continues it)')
    assert oldest.startswith(ids["the  first\nquestion"] + "  ")
    assert oldest.endswith('  echo  2 messages  "the first question"')


def test_continue_by_id_picks_that_conversation_and_makes_it_the_last(tmp_path: Path) -> None:
    modelplug(tmp_path, "chat", "-m", "echo", "-s", "Be brief.", "old")
    modelplug(tmp_path, "chat", "-m", "echo", "new")
    old = next(c["id"] for c in stored(tmp_path) if c["messages"][0]["content"][0]["text"] == "old")
    done = modelplug(tmp_path, "chat", "-c", old, "--usage", "more")
    # echo counts words: its system prompt (2) and turns (1 + 1) are sent with this one.
    assert (done.returncode, done.stdout) == (0, "more\n")
    assert done.stderr == "echo/echo: input 5 output 1 cost $0\n"
    assert listed(tmp_path)[0].startswith(old + "  ")
    again = modelplug(tmp_path, "chat", "--continue", "--usage", "and more")
    assert again.stderr == "echo/echo: input 8 output 2 cost $0\n"  # the same one, the last
    assert sorted(len(c["messages"]) for c in stored(tmp_path)) == [2, 6]


def test_a_bare_c_before_the_prompt_still_continues_the_last(tmp_path: Path) -> None:
    modelplug(tmp_path, "chat", "-m", "echo", "one")
    done = modelplug(tmp_path, "chat", "-c", "two words", "--usage")
    assert (done.returncode, done.stdout) == (0, "two words\n")
    assert done.stderr == "echo/echo: input 4 output 2 cost $0\n"
    assert [len(c["messages"]) for c in stored(tmp_path)] == [4]


def test_an_id_that_names_no_conversation_says_where_to_find_them(tmp_path: Path) -> None:
    modelplug(tmp_path, "chat", "-m", "echo", "one")
    done = modelplug(tmp_path, "chat", "-c", "20200101T000000-abcdef", "hi")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "modelplug: no conversation 20200101T000000-abcdef in "
        f"{tmp_path / 'data' / 'conversations'}; modelplug chat --list shows those there are\n"
    )
    done = modelplug(tmp_path, "chat", "-c", "not-an-id", "hi")
    assert done.returncode == 2
    assert done.stderr.startswith("modelplug: -c not-an-id: not a conversation's id (such as ")
    assert done.stderr.endswith("a bare -c continues the last one\n")
