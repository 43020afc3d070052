"""A Redis that stops answering costs a call one timeout at most, and the calls after it
none: once a command has met the outage, every store of the process goes on from the
outage state (a check in the background finds Redis back), so no later step of the same
call (the settlement after a slow answer, say) waits out a timeout of its own again.

Against a real redis-server frozen with SIGSTOP (it accepts connections and answers
nothing, as a hung server does) and killed. What is counted is the Redis commands that
were sent and failed (each a wait of up to one timeout when Redis is frozen); the only
time bound is a generous one (twice the timeout), which a 2-core machine under load
keeps."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
from modelplug.contract.types import Notice
from modelplug.testing import FakeModel, text
from modelplug_redis.connection import Connection, StoreUnavailableError, connection_for

TIMEOUT = 1.0  # [redis] timeout, as the operator set it
HANG_GUARD = 60.0  # seconds: only a hang reaches it


class Sent:
    """Every Redis command the stores sent that failed (a fast refusal from the outage
    state is not sent: it is not counted)."""

    def __init__(self) -> None:
        self.failed: list[str] = []


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sent]:
    seen = Sent()
    run, script = Connection.run, Connection.script

    async def counted(method: Any, self: Connection, *args: Any) -> Any:
        try:
            return await method(self, *args)
        except StoreUnavailableError as exc:
            if "failed lately" not in exc.message:
                seen.failed.append(exc.message)
            raise

    async def counted_run(self: Connection, *args: Any) -> Any:
        return await counted(run, self, *args)

    async def counted_script(self: Connection, *args: Any) -> Any:
        return await counted(script, self, *args)

    monkeypatch.setattr(Connection, "run", counted_run)
    monkeypatch.setattr(Connection, "script", counted_script)
    yield seen


def client_for(make_client: Any, redis_server: Any, fake: FakeModel) -> Any:
    config = {
        # retry_interval far below the answer's time: after it, the old rule sent the
        # settlement to the frozen Redis again, a second timeout in the same call.
        "redis": {"url": redis_server.url, "timeout": TIMEOUT, "retry_interval": 0.01},
        "limits": {"budgets": {"tokens": {"tokens": 10**9, "period": "day"}}},
    }
    return make_client(
        fake,
        "modelplug-limits",
        "modelplug-redis",
        "modelplug-fallback",
        entry_points=True,
        config=config,
    )


async def timed_call(client: Any) -> tuple[str, float, list[str]]:
    said: list[str] = []

    def keep(event: Any) -> None:
        if isinstance(event, Notice):
            said.append(event.kind)

    started = time.monotonic()
    response = await asyncio.wait_for(client.acomplete("fake/m", "hi", on_event=keep), HANG_GUARD)
    return response.text, time.monotonic() - started, said


async def back(client: Any) -> None:
    """Until the process's check finds Redis answering again."""
    connection = connection_for(client)
    assert connection is not None
    async with asyncio.timeout(HANG_GUARD):
        while connection.is_down():
            await asyncio.sleep(0.02)


def test_a_frozen_redis_costs_the_first_call_one_wait_and_the_next_calls_none(
    make_client: Any, redis_server: Any, sent: Sent
) -> None:
    # Each answer takes longer than retry_interval (two events, 0.05 s before each).
    fake = FakeModel([text(f"answer {i}") for i in range(6)], delay=0.05)
    client = client_for(make_client, redis_server, fake)
    pid = redis_server.process.pid

    async def scenario() -> tuple[list[tuple[str, float, list[str]]], int, tuple[str, list[str]]]:
        await timed_call(client)  # Redis answers: scripts loaded, connections made
        os.kill(pid, signal.SIGSTOP)
        try:
            frozen = [await timed_call(client) for _ in range(4)]
            failed_while_frozen = len(sent.failed)
        finally:
            os.kill(pid, signal.SIGCONT)
        await back(client)
        text_back, _, said_back = await timed_call(client)
        await client.aclose()
        return frozen, failed_while_frozen, (text_back, said_back)

    frozen, failed, (text_back, said_back) = asyncio.run(scenario())

    assert [answer for answer, _, _ in frozen] == [f"answer {i}" for i in range(1, 5)]
    # One command met the frozen server; every other step of every call used the
    # outage state (before: the settlement after each slow answer was sent again, and
    # a script waited out four timeouts).
    # Each command that met the frozen server waited one timeout, and only one did: the
    # four calls together waited one timeout (counted, not timed: a loaded machine
    # stretches seconds, never the count).
    assert failed == 1
    assert all("limits" in said for _, _, said in frozen)  # fail open, said so
    assert text_back == "answer 5" and said_back == []  # Redis again, no notice


def test_a_killed_redis_is_met_once_and_found_again_after_a_restart(
    make_client: Any, redis_server: Any, sent: Sent
) -> None:
    fake = FakeModel([text(f"answer {i}") for i in range(5)], delay=0.05)
    client = client_for(make_client, redis_server, fake)

    async def scenario() -> tuple[list[tuple[str, float, list[str]]], int, list[str]]:
        await timed_call(client)
        redis_server.kill()
        down = [await timed_call(client) for _ in range(3)]
        failed_while_down = len(sent.failed)
        redis_server.start()
        await back(client)
        _, _, said_back = await timed_call(client)
        await client.aclose()
        return down, failed_while_down, said_back

    down, failed, said_back = asyncio.run(scenario())

    assert [answer for answer, _, _ in down] == ["answer 1", "answer 2", "answer 3"]
    assert failed == 1  # the first command to meet the dead server; the rest knew
    assert said_back == []
