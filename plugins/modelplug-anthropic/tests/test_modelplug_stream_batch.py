"""modelplug_stream for `anthropic-batch`: a fake Message Batches endpoint on the
loopback server, the real SDK, and an injected clock so nothing really waits."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from modelplug import Client, ModelError, as_request
from modelplug.contract.types import Done, Notice, TextDelta
from modelplug_anthropic import batch as batch_module
from modelplug_kit.testing import WireServer, load_recording

MakeClient = Callable[..., Client]
Recording = Callable[[str], Path]
BATCH_ID = "msgbatch_01HkcTjaV5uDC8jWR4ZsDV8d"
BATCHES = "/v1/messages/batches"
ONE = f"{BATCHES}/{BATCH_ID}"
SPEC = "anthropic-batch/claude-sonnet-4-6"


class FakeTime:
    """A clock that only moves when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


@pytest.fixture
def fake_time(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    fake = FakeTime()
    monkeypatch.setattr(
        batch_module, "TIMING", batch_module.BatchTiming(sleep=fake.sleep, clock=fake.clock)
    )
    return fake


def batch_json(server: WireServer, status: str, **counts: int) -> dict[str, Any]:
    """A MessageBatch as the API reference shows it."""
    ended = status == "ended"
    return {
        "id": BATCH_ID,
        "type": "message_batch",
        "processing_status": status,
        "request_counts": {
            "processing": 0 if ended else 1,
            "succeeded": counts.get("succeeded", 0),
            "errored": counts.get("errored", 0),
            "canceled": counts.get("canceled", 0),
            "expired": counts.get("expired", 0),
        },
        "ended_at": "2026-11-30T01:00:00Z" if ended else None,
        "created_at": "2026-11-30T00:00:00Z",
        "expires_at": "2026-12-01T00:00:00Z",
        "cancel_initiated_at": None,
        "results_url": f"{server.url}{ONE}/results" if ended else None,
    }


def queue_batch(server: WireServer, results: Path, *, in_progress: int = 4, **counts: int) -> None:
    """create -> ``in_progress`` checks -> ended -> (results: retrieve, then the JSONL)."""
    server.add_json(batch_json(server, "in_progress"), path=BATCHES)
    for _ in range(in_progress):
        server.add_json(batch_json(server, "in_progress"), path=ONE)
    server.add_json(batch_json(server, "ended", **counts), path=ONE)
    server.add_json(batch_json(server, "ended", **counts), path=ONE)
    server.add(load_recording(results), path=f"{ONE}/results", content_type="application/binary")


def run(client: Client, spec: str = SPEC, prompt: str = "hi") -> list[Any]:
    return list(client.stream(spec, prompt))


def test_modelplug_stream_batch_succeeded_yields_notices_text_and_half_price(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording, fake_time: FakeTime
) -> None:
    queue_batch(wire_server, recording("batch_succeeded.jsonl"), succeeded=1)
    client = claude_client(
        '\n[models."anthropic-batch/claude-sonnet-4-6".price]\ninput = 3\noutput = 15\n'
    )
    events = run(client)
    notices = [e for e in events if isinstance(e, Notice)]
    assert notices[0].kind == "batch"
    assert notices[0].details["batch_id"] == BATCH_ID
    assert BATCH_ID in notices[0].message
    # Checks at +5, +15, +35, +65 (still in progress: a status line), +95 (ended).
    assert fake_time.waits == [5.0, 10.0, 20.0, 30.0, 30.0]
    status = [n for n in notices if n.kind == "batch_status"]
    assert len(status) == 1
    assert "in_progress" in status[0].message
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert [d.text for d in deltas] == ["Batch hello."]
    done = events[-1]
    assert isinstance(done, Done)
    response = done.response
    assert response.text == "Batch hello."
    assert response.price_factor == 0.5
    assert response.model == SPEC
    assert response.metadata["batch_id"] == BATCH_ID
    assert (response.usage.input, response.usage.output) == (11, 4)
    assert response.cost is not None
    assert response.cost.amount == (11 * 3 + 4 * 15) / Decimal(1_000_000) / 2
    created = wire_server.requests[0]
    assert (created.method, created.path) == ("POST", BATCHES)
    (entry,) = created.json()["requests"]
    assert entry["custom_id"] == "modelplug"
    assert entry["params"]["model"] == "claude-sonnet-4-6"
    assert entry["params"]["messages"][0]["content"][0]["text"] == "hi"
    assert "stream" not in entry["params"]


def test_modelplug_stream_batch_errored_overload_is_transient(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording, fake_time: FakeTime
) -> None:
    queue_batch(wire_server, recording("batch_errored.jsonl"), in_progress=0, errored=1)
    with pytest.raises(ModelError) as caught:
        run(claude_client())
    assert caught.value.kind == "overloaded"
    assert caught.value.retryable and caught.value.error_class.fallback
    assert "overloaded_error" in str(caught.value)


def test_modelplug_stream_batch_expired_is_not_retried(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording, fake_time: FakeTime
) -> None:
    queue_batch(wire_server, recording("batch_expired.jsonl"), in_progress=0, expired=1)
    with pytest.raises(ModelError) as caught:
        run(claude_client())
    assert not caught.value.retryable
    assert "expired" in str(caught.value)
    # The batch had ended: nothing to cancel.
    assert not [r for r in wire_server.requests if r.path.endswith("/cancel")]


def test_modelplug_stream_batch_abort_cancels_the_batch(
    claude_client: MakeClient, wire_server: WireServer, fake_time: FakeTime
) -> None:
    wire_server.add_json(batch_json(wire_server, "in_progress"), path=BATCHES)
    wire_server.add_json(batch_json(wire_server, "canceling"), path=f"{ONE}/cancel")
    client = claude_client()

    async def first_notice_then_abort() -> Notice:
        # The provider's own iterator, closed the way a caller's abort closes it.
        stream = client.open_stream(client.resolve(SPEC), as_request("hi"))
        first = await stream.__anext__()
        await stream.aclose()
        await client.aclose()
        assert isinstance(first, Notice)
        return first

    first = asyncio.run(first_notice_then_abort())
    assert first.details["batch_id"] == BATCH_ID
    cancel = [r for r in wire_server.requests if r.path == f"{ONE}/cancel"]
    assert len(cancel) == 1 and cancel[0].method == "POST"


def test_modelplug_stream_batch_task_cancel_while_waiting_cancels_the_batch(
    claude_client: MakeClient, wire_server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[asyncio.Event] = []

    async def never(seconds: float) -> None:
        started[0].set()
        await asyncio.Event().wait()

    monkeypatch.setattr(batch_module, "TIMING", batch_module.BatchTiming(sleep=never))
    wire_server.add_json(batch_json(wire_server, "in_progress"), path=BATCHES)
    wire_server.add_json(batch_json(wire_server, "canceling"), path=f"{ONE}/cancel")
    client = claude_client()

    async def main() -> None:
        started.append(asyncio.Event())

        async def consume() -> None:
            async for _ in client.astream(SPEC, "hi"):
                pass

        task = asyncio.create_task(consume())
        await asyncio.wait_for(started[0].wait(), timeout=5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await client.aclose()

    asyncio.run(main())
    assert [r.method for r in wire_server.requests if r.path == f"{ONE}/cancel"] == ["POST"]


def test_modelplug_stream_batch_failed_checks_are_retried(
    claude_client: MakeClient, wire_server: WireServer, recording: Recording, fake_time: FakeTime
) -> None:
    wire_server.add_json(batch_json(wire_server, "in_progress"), path=BATCHES)
    for _ in range(3):
        wire_server.add_json(
            {"type": "error", "error": {"type": "api_error"}}, status=500, path=ONE
        )
    wire_server.add_json(batch_json(wire_server, "ended", succeeded=1), path=ONE)
    wire_server.add_json(batch_json(wire_server, "ended", succeeded=1), path=ONE)
    wire_server.add(
        load_recording(recording("batch_succeeded.jsonl")),
        path=f"{ONE}/results",
        content_type="application/binary",
    )
    events = run(claude_client())
    assert isinstance(events[-1], Done)
    assert events[-1].response.text == "Batch hello."
    checks = [r for r in wire_server.requests if r.path == ONE]
    assert len(checks) == 5  # three failures, the check that saw "ended", the results' own


def test_modelplug_stream_batch_ten_failures_in_a_row_fail_and_cancel(
    claude_client: MakeClient, wire_server: WireServer, fake_time: FakeTime
) -> None:
    wire_server.add_json(batch_json(wire_server, "in_progress"), path=BATCHES)
    for _ in range(10):
        wire_server.add_json(
            {"type": "error", "error": {"type": "api_error"}}, status=500, path=ONE
        )
    wire_server.add_json(batch_json(wire_server, "canceling"), path=f"{ONE}/cancel")
    with pytest.raises(ModelError) as caught:
        run(claude_client())
    assert caught.value.kind == "transient"
    assert len([r for r in wire_server.requests if r.path == ONE]) == 10
    assert [r.method for r in wire_server.requests if r.path == f"{ONE}/cancel"] == ["POST"]


def test_modelplug_stream_batch_check_that_hangs_is_cut_off_and_retried(
    claude_client: MakeClient,
    wire_server: WireServer,
    recording: Recording,
    fake_time: FakeTime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The limit is real time, and every request of the batch must answer within it on a
    # loaded machine (0.2 s cut a check that was only slow, in a parallel run, and its
    # retry found nothing queued); the stalled check waits past it, as long as it takes.
    monkeypatch.setattr(
        batch_module,
        "TIMING",
        batch_module.BatchTiming(sleep=fake_time.sleep, clock=fake_time.clock, check_limit=2.0),
    )
    wire_server.add_json(batch_json(wire_server, "in_progress"), path=BATCHES)
    wire_server.add_json(batch_json(wire_server, "in_progress"), path=ONE, stall=30.0)
    queue_rest = batch_json(wire_server, "ended", succeeded=1)
    wire_server.add_json(queue_rest, path=ONE)
    wire_server.add_json(queue_rest, path=ONE)
    wire_server.add(
        load_recording(recording("batch_succeeded.jsonl")),
        path=f"{ONE}/results",
        content_type="application/binary",
    )
    events = run(claude_client())
    assert isinstance(events[-1], Done)
    assert events[-1].response.text == "Batch hello."


def test_batch_waits_are_5_10_20_then_every_30_seconds() -> None:
    waits: Iterator[float] = batch_module.BatchTiming().waits()
    assert [next(waits) for _ in range(6)] == [5.0, 10.0, 20.0, 30.0, 30.0, 30.0]
    timing = batch_module.BatchTiming()
    assert (timing.check_limit, timing.max_failures, timing.status_every) == (60.0, 10, 60.0)
