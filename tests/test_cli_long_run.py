"""``modelplug chat`` shows a retry's wait (a live line on a terminal, a plain line
elsewhere) and the total cost of the chat: run as a real process against the loopback
wire server answering 429 (retry-after-ms) and then recorded Chat Completions bytes."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from modelplug.cli.long_run import CLEAR, RetryLine, Spend, retry_line
from modelplug.contract.observers import RetryEvent, UsageEvent
from modelplug.contract.types import Cost, Message, Response, Usage
from modelplug_kit.testing import WireServer

pytest.importorskip("modelplug_openai_compat")
pytest.importorskip("modelplug_fallback")

ROOT = Path(__file__).resolve().parent.parent
TEXT = ROOT / "plugins/modelplug-openai-compat/tests/recordings/openai_text.sse"
PATH = "/v1/chat/completions"
RATE_LIMITED = '{"error": {"message": "Rate limit reached", "type": "requests", "code": null}}'
WAIT = RetryEvent(
    attempt=2,
    max_attempts=3,
    wait_s=4.0,
    reason="rate limited (429)",
    route="anthropic/claude-sonnet-4-6",
    outcome="waiting",
    status=429,
    message="anthropic/claude-sonnet-4-6: rate limited (429); retry 2 of 3 in 4.0 s",
)


def usage_event(route: str, tokens: int, cost: str | None) -> UsageEvent:
    response = Response(message=Message(role="assistant", content=[]), model=route)
    priced = Cost(amount=Decimal(cost), source="test") if cost is not None else None
    return UsageEvent(usage=Usage(input=tokens), cost=priced, route=route, response=response)


def test_the_retry_line_says_status_provider_wait_and_attempt() -> None:
    assert retry_line(WAIT, 4.0) == "429 from anthropic: retrying in 4 s (2/3)"
    assert retry_line(WAIT, 0.5) == "429 from anthropic: retrying in 0.5 s (2/3)"


def test_a_live_retry_line_is_rewritten_in_place_and_cleared_on_recovery() -> None:
    out = io.StringIO()
    line = RetryLine(out, live=True)
    recovered = RetryEvent(1, 3, 0.0, "", WAIT.route, "recovered", message="recovered")

    async def run() -> None:
        await line(WAIT)
        await line(recovered)

    asyncio.run(run())
    assert out.getvalue() == f"{CLEAR}modelplug: 429 from anthropic: retrying in 4 s (2/3){CLEAR}"
    assert line.ticker is None


def test_a_live_retry_line_counts_down_each_second() -> None:
    out = io.StringIO()
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    line = RetryLine(out, live=True, sleep=sleep)

    async def run() -> None:
        await line(WAIT)
        assert line.ticker is not None
        await line.ticker

    asyncio.run(run())
    shown = [part for part in out.getvalue().split(CLEAR) if part]
    assert [part.split("retrying in ")[1] for part in shown] == [
        "4 s (2/3)",
        "3 s (2/3)",
        "2 s (2/3)",
        "1 s (2/3)",
    ]
    assert slept == [1.0, 1.0, 1.0]


def test_the_total_names_calls_tokens_and_what_no_table_priced() -> None:
    spend = Spend()
    spend.add(usage_event("wire/a", 1000, "0.0010"))
    spend.add(usage_event("wire/a", 234, "0.0002"))
    assert spend.line() == "cost: $0.0012 (2 calls, 1,234 tokens)"
    spend.add(usage_event("lab/x", 10, None))
    assert spend.line() == (
        "cost: $0.0012 and 1 unpriced call (no price is known for lab/x) (3 calls, 1,244 tokens)"
    )
    unpriced = Spend()
    unpriced.add(usage_event("lab/x", 10, None))
    assert unpriced.line() == "cost: unknown, no price is known for lab/x (1 call, 10 tokens)"


def config_for(tmp_path: Path, wire: WireServer) -> Path:
    config = tmp_path / "config.toml"
    config.write_text(
        f"""
[providers.wire]
type = "openai-compatible"
base_url = "{wire.url}/v1"
local = false

[models."wire/gpt-4o-mini"]
price = {{ input = 0.15, output = 0.6, cache_read = 0.075, cache_write = 0 }}

[fallback]
retries = 2
store = "memory"
"""
    )
    return config


def serve_429_then_text(wire: WireServer) -> None:
    # retry-after-ms, as OpenAI sends it: a short wait, so the test never waits long.
    wire.add(
        RATE_LIMITED,
        path=PATH,
        status=429,
        headers={"retry-after-ms": "200"},
        content_type="application/json",
    )
    wire.add_file(TEXT, path=PATH)


def environ(tmp_path: Path, config: Path) -> dict[str, str]:
    return {
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "MODELPLUG_CONFIG": str(config),
        "MODELPLUG_DATA_DIR": str(tmp_path / "data"),
        "MODELPLUG_PLUGINS": "modelplug-openai-compat,modelplug-fallback",
        "TERM": "xterm",
    }


COMMAND = [sys.executable, "-m", "modelplug", "chat", "-n", "-m", "wire/gpt-4o-mini", "hi"]


def test_chat_shows_the_wait_as_a_plain_line_off_a_terminal(
    tmp_path: Path, wire_server: WireServer
) -> None:
    serve_429_then_text(wire_server)
    done = subprocess.run(
        [*COMMAND, "--usage"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=environ(tmp_path, config_for(tmp_path, wire_server)),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Sockets wait in silence — café ☕\n"
    lines = done.stderr.splitlines()
    assert lines[0].startswith(
        "modelplug: wire/gpt-4o-mini: rate limited (429); retry 1 of 2 in 0.2 s"
    )
    assert lines[1] == "modelplug: wire/gpt-4o-mini: recovered on retry 1 of 2"
    assert "\x1b" not in done.stderr, "no terminal codes in a pipe"
    # 226 new input tokens at 0.15, 1024 cached at 0.075, 9 output at 0.6 (per million):
    # one call's own usage line is the total, so no total line follows it off a terminal.
    assert lines[-1] == (
        "wire/gpt-4o-mini: input 226 output 9 cache read 1024 write 0 cost $0.0001161"
    )
    assert not [line for line in lines if line.startswith("cost:")]


def test_chat_shows_a_live_retry_line_and_the_total_on_a_terminal(
    tmp_path: Path, wire_server: WireServer
) -> None:
    serve_429_then_text(wire_server)
    controller, terminal = os.openpty()
    try:
        done = subprocess.run(
            COMMAND,
            stdout=subprocess.PIPE,
            stderr=terminal,
            cwd=tmp_path,
            env=environ(tmp_path, config_for(tmp_path, wire_server)),
            timeout=120,
            check=False,
        )
    finally:
        os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal's other end is closed: all was read
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    err = shown.decode()
    assert done.returncode == 0, err
    assert f"{CLEAR}modelplug: 429 from wire: retrying in 0.2 s (1/2)" in err
    # Cleared on recovery, not left as a line of its own.
    assert "recovered" not in err
    after = err.split("retrying in 0.2 s (1/2)", 1)[1]
    assert after.startswith(CLEAR) or f"{CLEAR}" in after.split("\n")[0]
    assert "cost: $0.0001161 (1 call, 1,259 tokens)" in err
