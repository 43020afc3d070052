"""``modelplug chat`` with no prompt: an interactive chat reading stdin line by line,
each turn sending the whole conversation back; exit, quit or the end of input end it;
Ctrl-C stops a reply, not the chat. Run as the real command in a subprocess."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


def environment(tmp_path: Path, config: str = "") -> dict[str, str]:
    (tmp_path / "config.toml").write_text(config)
    (tmp_path / "work").mkdir(exist_ok=True)
    return {
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "MODELPLUG_CONFIG": str(tmp_path / "config.toml"),
        "MODELPLUG_DATA_DIR": str(tmp_path / "data"),
    }


def chat(
    tmp_path: Path, *args: str, stdin: str, config: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "modelplug", "chat", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=tmp_path / "work",
        env=environment(tmp_path, config),
        timeout=120,
        check=False,
    )


def lab(url: str) -> str:
    return f'[providers.lab]\ntype = "openai-compatible"\nbase_url = "{url}/v1"\n'


def reply(*pieces: str) -> list[dict[str, Any]]:
    """A Chat Completions stream of ``pieces`` (the chunk shape of OpenAI's streaming
    API, as tests/recordings/chat_text.sse has it; the text is invented)."""
    chunks: list[dict[str, Any]] = [{"choices": [{"index": 0, "delta": {"role": "assistant"}}]}]
    chunks += [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return chunks


def test_each_line_is_a_turn_and_the_end_of_input_ends_the_chat(tmp_path: Path) -> None:
    done = chat(tmp_path, "-m", "echo", "--usage", stdin="one two\nthree\n")
    assert done.returncode == 0
    assert done.stdout == "one two\nthree\n"
    # echo counts every text block sent: the second turn sent the first one back.
    assert done.stderr.splitlines() == [
        "echo/echo: input 2 output 2 cost $0",
        "echo/echo: input 5 output 1 cost $0",
        "cost: $0 (2 calls, 10 tokens)",  # the chat's total
    ]


@pytest.mark.parametrize("word", ["exit", "quit", "  QUIT  "])
def test_exit_or_quit_ends_the_chat(tmp_path: Path, word: str) -> None:
    done = chat(tmp_path, "-m", "echo", stdin=f"first\n\n{word}\nnever sent\n")
    assert (done.returncode, done.stdout, done.stderr) == (0, "first\n", "")


def test_every_turn_sends_the_conversation_so_far(tmp_path: Path, wire_server: Any) -> None:
    wire_server.add_sse(reply("Hello, ", "Ada."), done=True)
    wire_server.add_sse(reply("Fine, thanks."), done=True)
    done = chat(
        tmp_path,
        "-m",
        "lab/m",
        "--system",
        "Be brief.",
        stdin="Hi, I am Ada\nHow are you?\n",
        config=lab(wire_server.url),
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "Hello, Ada.\nFine, thanks.\n"
    first, second = (r.json()["messages"] for r in wire_server.requests)
    assert first == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi, I am Ada"},
    ]
    assert second == [
        *first,
        {"role": "assistant", "content": "Hello, Ada."},
        {"role": "user", "content": "How are you?"},
    ]


def test_a_failed_turn_is_reported_and_the_chat_goes_on(tmp_path: Path, wire_server: Any) -> None:
    wire_server.add_json({"error": {"message": "model is loading"}}, status=503)
    wire_server.add_sse(reply("Ready now."), done=True)
    config = lab(wire_server.url) + "[fallback]\nretries = 0\n"
    done = chat(tmp_path, "-m", "lab/m", stdin="first try\nsecond try\n", config=config)
    assert done.stdout == "Ready now.\n"
    assert "lab answered 503: model is loading" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.returncode == 0  # the last turn succeeded
    # The failed turn is not part of the conversation the next one sends.
    assert wire_server.requests[1].json()["messages"] == [{"role": "user", "content": "second try"}]


@contextmanager
def ctrl_c_handled_in_children() -> Iterator[None]:
    """Start children with Ctrl-C at its default, as a terminal starts the command. A
    test run started in the background of a script (``tox &``, CI's runner) ignores
    SIGINT, every child inherits that, and Python then never turns SIGINT into
    KeyboardInterrupt: the chat would go on waiting for the stalled reply."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield  # exec resets a handler to the default, where an ignored signal stays ignored
    finally:
        signal.signal(signal.SIGINT, previous)


def read_until(stream: Any, wanted: str, lines: queue.Queue[str], timeout: float) -> str:
    """What ``stream`` printed until ``wanted`` appeared (read on a thread)."""

    def pump() -> None:
        while True:
            char = stream.read(1)
            if not char:
                return
            lines.put(char)

    threading.Thread(target=pump, daemon=True).start()
    seen = ""
    while wanted not in seen:
        seen += lines.get(timeout=timeout)
    return seen


def test_ctrl_c_stops_a_reply_and_the_chat_goes_on(tmp_path: Path, wire_server: Any) -> None:
    # The first reply stalls after its first words, long past the test's patience.
    slow = [f"data: {json.dumps(c)}\n\n".encode() for c in reply("Once upon", " a time")]
    wire_server.add([slow[0], slow[1], (60.0, slow[2]), slow[3]])
    wire_server.add_sse(reply("The end."), done=True)
    with ctrl_c_handled_in_children():
        process = subprocess.Popen(
            [sys.executable, "-m", "modelplug", "chat", "-m", "lab/m"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path / "work",
            env=environment(tmp_path, lab(wire_server.url)),
        )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write("Tell me a story\n")
        process.stdin.flush()
        chars: queue.Queue[str] = queue.Queue()
        shown = read_until(process.stdout, "Once upon", chars, timeout=60)
        process.send_signal(signal.SIGINT)
        process.stdin.write("Finish it\n")
        process.stdin.close()
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
    while not chars.empty():
        shown += chars.get()
    err = process.stderr.read() if process.stderr else ""
    assert shown == "Once upon\nThe end.\n"
    assert err == "\nmodelplug: reply stopped\n"
    assert wire_server.wait_closed_by_client(1)  # the stopped reply's connection
    # What was shown of the stopped reply is part of the conversation.
    assert wire_server.requests[1].json()["messages"] == [
        {"role": "user", "content": "Tell me a story"},
        {"role": "assistant", "content": "Once upon"},
        {"role": "user", "content": "Finish it"},
    ]


def test_the_console_script_runs_the_chat(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("modelplug")
    if not script.exists():
        pytest.skip("no console script beside this interpreter")
    done = subprocess.run(
        [str(script), "chat", "-m", "echo"],
        input="from the console script\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=environment(tmp_path),
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "from the console script\n")
