"""Shared fixtures: the Anthropic Batch API and Messages API on the loopback server
(recorded bytes), a fake clock both the deadline policy and the batch route read, and
Clients built with a DeadlinePolicy on that clock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import modelplug_anthropic
import pytest
from modelplug import Client
from modelplug.testing import calm_hypothesis
from modelplug_anthropic import batch as batch_module
from modelplug_deadline import DeadlinePolicy
from modelplug_kit.testing import WireServer, load_recording

RECORDINGS = Path(__file__).parent / "recordings"
TEST_KEY = "sk-ant-test-0123456789abcdef"
BATCH_ID = "msgbatch_01HkcTjaV5uDC8jWR4ZsDV8d"
BATCHES = "/v1/messages/batches"
ONE = f"{BATCHES}/{BATCH_ID}"
CANCEL = f"{ONE}/cancel"
MESSAGES = "/v1/messages"
SLOW = "anthropic-batch/claude-sonnet-4-6"
FAST = "anthropic/claude-sonnet-4-6"
START = 1_796_000_000.0  # 2026-11-29T...Z: any Unix time will do


class FakeTime:
    """A clock that moves only when the code under test sleeps (the batch route's
    status checks); a deadline's wait returns once the clock has reached it."""

    def __init__(self) -> None:
        self.at = START
        self.waits: list[float] = []
        self._timers: list[tuple[float, asyncio.Future[None]]] = []

    def now(self) -> float:
        return self.at

    def clock(self) -> float:
        return self.at

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.at += seconds
        for moment, timer in self._timers:
            if moment <= self.at and not timer.done():
                timer.set_result(None)
        await asyncio.sleep(0)

    async def sleep_until(self, moment: float) -> None:
        if moment <= self.at:
            return
        timer = asyncio.get_running_loop().create_future()
        self._timers.append((moment, timer))
        await timer


@pytest.fixture
def fake_time(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    fake = FakeTime()
    monkeypatch.setattr(
        batch_module, "TIMING", batch_module.BatchTiming(sleep=fake.sleep, clock=fake.clock)
    )
    return fake


def batch_json(server: WireServer, status: str, **counts: int) -> dict[str, Any]:
    """A MessageBatch as the Message Batches API reference shows it."""
    ended = status == "ended"
    return {
        "id": BATCH_ID,
        "type": "message_batch",
        "processing_status": status,
        "request_counts": {
            "processing": 0 if ended else 1,
            "succeeded": counts.get("succeeded", 0),
            "errored": 0,
            "canceled": counts.get("canceled", 0),
            "expired": 0,
        },
        "ended_at": "2026-11-30T01:00:00Z" if ended else None,
        "created_at": "2026-11-30T00:00:00Z",
        "expires_at": "2026-12-01T00:00:00Z",
        "cancel_initiated_at": "2026-11-30T00:20:00Z" if status == "canceling" else None,
        "results_url": f"{server.url}{ONE}/results" if ended else None,
    }


def queue_waiting_batch(server: WireServer, checks: int = 60) -> None:
    """create, then ``checks`` answers of ``in_progress``; a cancel answers ``canceling``."""
    server.add_json(batch_json(server, "in_progress"), path=BATCHES)
    for _ in range(checks):
        server.add_json(batch_json(server, "in_progress"), path=ONE)
    server.add_json(batch_json(server, "canceling"), path=CANCEL)


def queue_ending_batch(server: WireServer, in_progress: int = 1) -> None:
    """create -> ``in_progress`` checks -> ended -> the results JSONL (recorded)."""
    server.add_json(batch_json(server, "in_progress"), path=BATCHES)
    for _ in range(in_progress):
        server.add_json(batch_json(server, "in_progress"), path=ONE)
    server.add_json(batch_json(server, "ended", succeeded=1), path=ONE)
    server.add_json(batch_json(server, "ended", succeeded=1), path=ONE)
    server.add(
        load_recording(RECORDINGS / "batch_succeeded.jsonl"),
        path=f"{ONE}/results",
        content_type="application/binary",
    )


def queue_fast_answer(server: WireServer) -> None:
    """The fast route's streamed answer (recorded SSE): ``Hello, world!``."""
    server.add_file(RECORDINGS / "text.sse", path=MESSAGES, content_type="text/event-stream")


def settings_toml(server: WireServer, deadline: str, slow: str = SLOW, prices: bool = True) -> str:
    """The user's file: ``anthropic`` (and so ``anthropic-batch``) on the loopback
    server, prices for both, and ``[deadlines.nightly]`` with ``deadline``'s keys."""
    own_prices = (
        f'[models."{SLOW}".price]\ninput = 3\noutput = 15\n'
        f'[models."{FAST}".price]\ninput = 3\noutput = 15\n'
    )
    return (
        f'[providers.anthropic]\ntype = "anthropic"\nbase_url = "{server.url}"\n'
        'api_key_env = "ANTHROPIC_API_KEY"\n'
        + (own_prices if prices else "")
        + f'[deadlines.nightly]\nslow = "{slow}"\nfast = "{FAST}"\n{deadline}\n'
    )


MakeDeadlineClient = Callable[..., Client]


@pytest.fixture
def deadline_client(
    make_client: Callable[..., Client],
    modelplug_config_dir: Path,
    wire_server: WireServer,
    fake_time: FakeTime,
    monkeypatch: pytest.MonkeyPatch,
) -> MakeDeadlineClient:
    """``deadline_client('step_limit = "2m"')``: a Client with the anthropic plugin and
    a DeadlinePolicy on the fake clock, ``[deadlines.nightly]`` holding those keys."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)

    def make(deadline: str = "", slow: str = SLOW, **kwargs: Any) -> Client:
        toml = settings_toml(wire_server, deadline, slow)
        (modelplug_config_dir / "config.toml").write_text(toml)
        policy = DeadlinePolicy(clock=fake_time)
        return make_client(modelplug_anthropic, policy, **kwargs)

    return make


def paths(server: WireServer, method: str, path: str) -> int:
    """How many ``method path`` requests the server received."""
    return sum(1 for r in server.requests if (r.method, r.path) == (method, path))


# No timing checks in property tests: a busy machine must not fail them by chance.
calm_hypothesis()
