"""A script whose call failed mid-stream exits cleanly: the failed stream leaves nothing
to run later, a Client left open is closed at exit, ``with Client() as client:`` closes
it. Run as subprocesses, so the interpreter's exit is real."""

from __future__ import annotations

import gc
import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from modelplug import ModelError
from modelplug.client.client import Client

RECORDINGS = Path(__file__).parent / "recordings"

# What asyncio and Python print when something of a loop is finalized too late.
NOISE = (
    "never retrieved",
    "Exception ignored",
    "meta_path",
    "was destroyed but it is pending",
    "Event loop is closed",
    "ResourceWarning",
)

# The script's head: a loopback server serving one recording, the user's file naming a
# provider `x` of the given type at it. asyncio's exception handler is spied on by
# writing to fd 2 directly, because what it reports during the interpreter's teardown
# goes through logging, which may be gone by then.
HEAD = """
import asyncio, os, sys
_report = asyncio.BaseEventLoop.call_exception_handler
def _spy(loop, context):
    os.write(2, ("asyncio reported: " + str(context.get("message")) + "\\n").encode())
    _report(loop, context)
asyncio.BaseEventLoop.call_exception_handler = _spy

from modelplug_kit.testing import WireServer
server = WireServer().start()
server.add_file(sys.argv[1])
provider_type = sys.argv[2]
base = server.url if provider_type == "anthropic" else server.url + "/v1"
with open(os.environ["MODELPLUG_CONFIG"], "w") as f:
    f.write(f'[providers.x]\\ntype = "{provider_type}"\\nbase_url = "{base}"\\n'
            'api_key_env = "X_API_KEY"\\n')
"""


def run_script(body: str, recording: str, provider_type: str, tmp_path: Path) -> Any:
    script = tmp_path / "script.py"
    script.write_text(HEAD + textwrap.dedent(body))
    env = {
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "MODELPLUG_CONFIG": str(tmp_path / "config.toml"),
        "X_API_KEY": "sk-exit-test-0123456789",
        "PYTHONWARNINGS": "default",
    }
    return subprocess.run(
        [sys.executable, str(script), str(RECORDINGS / recording), provider_type],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
        check=False,
    )


MIDSTREAM = [
    ("midstream_llamacpp_context_error.sse", "openai-compatible", "exceeds the available context"),
    ("midstream_event_error.sse", "openai-compatible", "maximum context length"),
    ("midstream_anthropic_overloaded.sse", "anthropic", "Overloaded"),
    ("midstream_responses_error_event.sse", "openai-responses", "insufficient_quota"),
]


@pytest.mark.parametrize(("recording", "provider_type", "words"), MIDSTREAM)
def test_an_uncaught_midstream_error_ends_the_script_with_its_traceback_only(
    recording: str, provider_type: str, words: str, tmp_path: Path
) -> None:
    done = run_script(
        """
        import modelplug
        modelplug.complete("x/m", "hi")
        """,
        recording,
        provider_type,
        tmp_path,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    # The error is the last thing printed: nothing runs at the interpreter's exit.
    assert words in lines[-1] and "[x/m]" in lines[-1]
    assert not [n for n in NOISE if n in done.stderr], done.stderr
    assert "asyncio reported" not in done.stderr


@pytest.mark.parametrize(("recording", "provider_type", "words"), MIDSTREAM)
def test_a_caught_midstream_error_and_a_client_left_open_exit_quietly(
    recording: str, provider_type: str, words: str, tmp_path: Path
) -> None:
    done = run_script(
        """
        import gc
        import modelplug
        client = modelplug.Client()
        try:
            client.complete("x/m", "hi")
        except modelplug.ModelError as exc:
            print("failed:", exc)
        gc.collect()  # what the failed stream dropped is collected now, the loop idle
        """,
        recording,
        provider_type,
        tmp_path,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("failed: ") and words in done.stdout


CLOSED_AT_EXIT = """
import atexit
# Registered before modelplug is imported, so it runs after modelplug's own exit hook.
atexit.register(lambda: print("connection closed at exit:", server.wait_closed_by_client(1, 10)))
import modelplug
client = modelplug.Client()
print(client.complete("x/m", "hi").text)
"""


def test_a_client_left_open_closes_its_pooled_connection_at_exit(tmp_path: Path) -> None:
    done = run_script(CLOSED_AT_EXIT, "chat_text.sse", "openai-compatible", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    reply, closed = done.stdout.splitlines()
    assert reply  # the call answered over a kept-alive connection ...
    assert closed == "connection closed at exit: True"  # ... which the exit closed


def test_with_client_closes_its_connection_when_the_block_ends(tmp_path: Path) -> None:
    done = run_script(
        """
        from modelplug import Client
        with Client() as client:
            print(client.complete("x/m", "hi").text)
            print("open inside:", not server.wait_closed_by_client(1, 0.2))
        print("closed after:", server.wait_closed_by_client(1, 10))
        """,
        "chat_text.sse",
        "openai-compatible",
        tmp_path,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[1:] == ["open inside: True", "closed after: True"]


def unfinished_generators() -> set[int]:
    gc.collect()
    return {id(o) for o in gc.get_objects() if inspect.isasyncgen(o) and o.ag_frame is not None}


@pytest.mark.parametrize("recording", [m[0] for m in MIDSTREAM[:2]])
def test_a_failed_stream_leaves_no_generator_to_close_later(
    recording: str, wire_server: Any, modelplug_config_dir: Path
) -> None:
    # An async generator left suspended is closed by asyncio as a task when it is
    # collected, on whatever run of the loop comes next: at exit, during the teardown.
    wire_server.add_file(RECORDINGS / recording)
    config = {
        "providers": {"x": {"type": "openai-compatible", "base_url": wire_server.url + "/v1"}}
    }
    with Client(enable=["modelplug-openai-compat"], config=config) as client:
        before = unfinished_generators()
        with pytest.raises(ModelError) as caught:
            client.complete("x/m", "hi")
        # Even while the error (and its traceback's frames) is still held.
        assert caught.value.error_class.kind == "context_overflow"
        assert unfinished_generators() - before == set()
