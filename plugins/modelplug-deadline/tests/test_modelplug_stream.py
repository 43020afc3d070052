"""modelplug_stream on a deadline route: the Batch API (recorded) as ``slow``, the
streamed Messages API (recorded) as ``fast``, and a fake clock, so nothing waits."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import pytest
from modelplug import RetryEvent
from modelplug.contract.types import Done, Notice
from modelplug_kit.testing import WireServer

from .conftest import (
    BATCH_ID,
    BATCHES,
    CANCEL,
    FAST,
    MESSAGES,
    SLOW,
    START,
    FakeTime,
    MakeDeadlineClient,
    paths,
    queue_ending_batch,
    queue_fast_answer,
    queue_waiting_batch,
)


def test_modelplug_stream_slow_answers_before_the_limit_at_half_price(
    deadline_client: MakeDeadlineClient, wire_server: WireServer, fake_time: FakeTime
) -> None:
    queue_ending_batch(wire_server)
    response = deadline_client('step_limit = "20m"\nswitch_after = "2h"').complete("nightly", "hi")
    assert response.model == SLOW
    assert response.text == "Batch hello."
    assert response.price_factor == 0.5
    assert response.cost is not None
    assert response.cost.amount == (11 * 3 + 4 * 15) / Decimal(1_000_000) / 2
    assert response.metadata["deadline"] == {"route": "deadline/nightly"}
    assert paths(wire_server, "POST", CANCEL) == 0
    assert paths(wire_server, "POST", MESSAGES) == 0


def test_modelplug_stream_step_limit_cancels_the_batch_and_sends_to_fast(
    deadline_client: MakeDeadlineClient, wire_server: WireServer, fake_time: FakeTime
) -> None:
    queue_waiting_batch(wire_server)
    queue_fast_answer(wire_server)
    retries: list[RetryEvent] = []
    response = deadline_client('step_limit = "2m"').complete(
        "nightly", "hi", on_retry=retries.append
    )
    assert response.model == FAST
    assert response.text == "Hello, world!"
    assert response.cost is not None and response.price_factor == 1.0
    # The batch was cancelled through the Batch API, then the request went to fast.
    assert paths(wire_server, "POST", CANCEL) == 1
    assert paths(wire_server, "POST", MESSAGES) == 1
    sent = next(r for r in wire_server.requests if r.path == MESSAGES).json()
    assert sent["messages"][0]["content"][0]["text"] == "hi"
    # Spend kept on record: what went to slow and was stopped there.
    cancelled = response.metadata["deadline"]["cancelled"]
    assert cancelled["route"] == SLOW and cancelled["batch_id"] == BATCH_ID
    assert cancelled["status"] == "cancelled"
    assert "step limit" in cancelled["why"]
    assert 120 <= cancelled["waited_s"] < 160  # the first status check past 2 min: 125 s
    # Progress through on_retry: the batch id at the start, a status line each minute.
    waits = [e for e in retries if e.outcome == "waiting"]
    assert BATCH_ID in waits[0].message and waits[0].route == SLOW
    assert 110 <= waits[0].wait_s <= 120  # until the step limit (read after the first check)
    assert any("in_progress after 1 min" in e.message for e in waits)
    (moved,) = [e for e in retries if e.outcome == "gave_up"]
    assert FAST in moved.message and BATCH_ID in moved.message


def test_modelplug_stream_step_limit_is_per_request(
    deadline_client: MakeDeadlineClient, wire_server: WireServer, fake_time: FakeTime
) -> None:
    client = deadline_client('step_limit = "2m"\nswitch_after = "1d"')
    # Checks at +5, +15, +35, +65 and +95 s: all used before the step limit, so none is
    # left over for the next request's batch.
    queue_waiting_batch(wire_server, checks=5)
    queue_fast_answer(wire_server)
    assert client.complete("nightly", "one").model == FAST
    queue_ending_batch(wire_server)
    # The next request goes to slow again: a step limit moves one request only.
    assert client.complete("nightly", "two").model == SLOW
    assert paths(wire_server, "POST", BATCHES) == 2


def test_modelplug_stream_switch_after_moves_the_waiting_request_and_every_later_one(
    deadline_client: MakeDeadlineClient, wire_server: WireServer, fake_time: FakeTime
) -> None:
    client = deadline_client('switch_after = "1m"')
    queue_waiting_batch(wire_server)
    queue_fast_answer(wire_server)
    response = client.complete("nightly", "one")
    assert response.model == FAST
    assert "switch" in response.metadata["deadline"]["cancelled"]["why"]
    assert paths(wire_server, "POST", CANCEL) == 1
    queue_fast_answer(wire_server)
    later = client.complete("nightly", "two")
    assert later.model == FAST
    assert "cancelled" not in later.metadata["deadline"]
    assert paths(wire_server, "POST", BATCHES) == 1  # no batch after the switch


def test_modelplug_stream_switch_after_counts_from_the_first_call(
    deadline_client: MakeDeadlineClient, wire_server: WireServer, fake_time: FakeTime
) -> None:
    client = deadline_client('switch_after = "10m"')
    queue_ending_batch(wire_server)
    assert client.complete("nightly", "one").model == SLOW  # answered at +15 s
    fake_time.at += 9 * 60  # +9:15 since the first call: still before the switch
    queue_waiting_batch(wire_server)
    queue_fast_answer(wire_server)
    response = client.complete("nightly", "two")
    assert response.model == FAST
    waited = response.metadata["deadline"]["cancelled"]["waited_s"]
    # The switch came 45 s into this request, seen at its status check at +65 s (not
    # 10 min: the switch counts from the first call, not from this one).
    assert 45 <= waited <= 65


def test_modelplug_stream_switch_at_in_the_past_goes_straight_to_fast(
    deadline_client: MakeDeadlineClient, wire_server: WireServer, fake_time: FakeTime
) -> None:
    queue_fast_answer(wire_server)
    response = deadline_client('switch_at = "2020-01-01T00:00Z"').complete("nightly", "hi")
    assert response.model == FAST
    assert paths(wire_server, "POST", BATCHES) == 0


def test_modelplug_stream_switch_at_cancels_the_waiting_batch(
    deadline_client: MakeDeadlineClient, wire_server: WireServer, fake_time: FakeTime
) -> None:
    from datetime import UTC, datetime

    moment = datetime.fromtimestamp(START + 90, UTC).isoformat()
    queue_waiting_batch(wire_server)
    queue_fast_answer(wire_server)
    response = deadline_client(f'switch_at = "{moment}"').complete("nightly", "hi")
    assert response.model == FAST
    assert paths(wire_server, "POST", CANCEL) == 1


def test_modelplug_stream_the_callers_cancel_is_never_a_switch(
    deadline_client: MakeDeadlineClient, wire_server: WireServer, fake_time: FakeTime
) -> None:
    client = deadline_client('step_limit = "20m"\nswitch_after = "2h"')
    queue_waiting_batch(wire_server)
    seen: list[Any] = []

    async def call() -> None:
        async for event in client.astream("nightly", "hi"):
            seen.append(event)

    async def main() -> None:
        task = asyncio.ensure_future(call())
        while not any(isinstance(e, Notice) for e in seen):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert paths(wire_server, "POST", CANCEL) == 1  # the batch stopped with the call
    assert paths(wire_server, "POST", MESSAGES) == 0  # and nothing went to fast
    assert not [e for e in seen if isinstance(e, Done)]


def test_modelplug_stream_a_plain_streamed_slow_route_works_the_same(
    deadline_client: MakeDeadlineClient, wire_server: WireServer, fake_time: FakeTime
) -> None:
    slow = "anthropic/claude-haiku-4-5"
    client = deadline_client('step_limit = "20m"', slow=slow)
    queue_fast_answer(wire_server)
    response = client.complete("deadline/nightly", "hi")
    assert response.model == slow
    assert response.text == "Hello, world!"
    assert wire_server.requests[0].json()["model"] == "claude-haiku-4-5"


def test_modelplug_stream_a_status_line_about_every_minute_of_the_clock(
    deadline_client: MakeDeadlineClient, wire_server: WireServer, fake_time: FakeTime
) -> None:
    # Checks at +5, +15, +35, then every 30 s up to +275: the step limit of 5 min is
    # seen at +305, after the last of them.
    queue_waiting_batch(wire_server, checks=11)
    queue_fast_answer(wire_server)
    retries: list[RetryEvent] = []
    response = deadline_client('step_limit = "5m"').complete(
        "nightly", "hi", on_retry=retries.append
    )
    assert response.model == FAST
    status = [e for e in retries if e.outcome == "waiting" and "in_progress after" in e.message]
    assert [e.message.split(" after ")[1][:5] for e in status] == [
        "1 min",
        "2 min",
        "3 min",
        "4 min",
    ]
    # Each says how long until the request moves to fast, counting down.
    assert [e.wait_s for e in status] == sorted((e.wait_s for e in status), reverse=True)
    assert all(0 < e.wait_s < 300 for e in status)


def test_modelplug_stream_the_default_policy_steps_aside_for_a_programs_own(
    make_client: Any,
    modelplug_config_dir: Any,
    wire_server: WireServer,
    fake_time: FakeTime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import modelplug_anthropic
    import modelplug_deadline
    from modelplug_deadline import DeadlinePolicy

    from .conftest import TEST_KEY, settings_toml

    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    toml = settings_toml(wire_server, 'step_limit = "1m"')
    (modelplug_config_dir / "config.toml").write_text(toml)
    client = make_client(modelplug_anthropic, modelplug_deadline, DeadlinePolicy(clock=fake_time))
    queue_waiting_batch(wire_server, checks=4)
    queue_fast_answer(wire_server)
    # Only the program's policy reads the fake clock: the step limit of 1 min on it is
    # reached at +65 s (the machine's clock would wait a real minute).
    assert client.complete("nightly", "hi").model == FAST


def test_modelplug_stream_step_limit_with_every_installed_plugin_on(
    make_client: Any,
    modelplug_config_dir: Any,
    wire_server: WireServer,
    fake_time: FakeTime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from modelplug_deadline import DeadlinePolicy

    from .conftest import TEST_KEY, settings_toml

    # Fallback, limits and the rest wrap the deadline route's stream and each one it
    # opens: the cancel of the slow request passes through them, and is never retried.
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    toml = settings_toml(wire_server, 'step_limit = "2m"')
    (modelplug_config_dir / "config.toml").write_text(toml)
    client = make_client(DeadlinePolicy(clock=fake_time), entry_points=True)
    assert {"modelplug-fallback", "modelplug-limits"} <= {p.name for p in client.plugins()}
    queue_waiting_batch(wire_server, checks=5)
    queue_fast_answer(wire_server)
    response = client.complete("nightly", "hi")
    assert response.model == FAST
    assert paths(wire_server, "POST", BATCHES) == 1
    assert paths(wire_server, "POST", CANCEL) == 1
    assert paths(wire_server, "POST", MESSAGES) == 1


def test_modelplug_stream_the_batch_answer_is_half_price_in_the_price_table(
    make_client: Any,
    modelplug_config_dir: Any,
    wire_server: WireServer,
    fake_time: FakeTime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("modelplug_prices")
    from modelplug_deadline import DeadlinePolicy

    from .conftest import TEST_KEY, settings_toml

    # No price in the settings: modelplug-prices' table (genai-prices) prices both.
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    toml = settings_toml(wire_server, 'step_limit = "20m"', prices=False)
    (modelplug_config_dir / "config.toml").write_text(toml)
    client = make_client(DeadlinePolicy(clock=fake_time), entry_points=True)
    queue_ending_batch(wire_server)
    response = client.complete("nightly", "hi")
    assert response.model == SLOW
    assert response.cost is not None and "genai-prices" in response.cost.source
    full = client.price(client.resolve(FAST), response.usage)
    assert full is not None and full.amount > 0
    assert response.cost.amount == full.amount / 2


def test_modelplug_stream_closing_the_stream_stops_the_batch_and_never_switches(
    deadline_client: MakeDeadlineClient, wire_server: WireServer, fake_time: FakeTime
) -> None:
    client = deadline_client('step_limit = "20m"')
    queue_waiting_batch(wire_server)

    async def main() -> None:
        events = client.astream("nightly", "hi")
        async for event in events:
            if isinstance(event, Notice):
                break  # the caller leaves while the batch waits
        await events.aclose()  # type: ignore[attr-defined]
        # The batch's cancel went out before the close returned.
        assert paths(wire_server, "POST", CANCEL) == 1

    asyncio.run(main())
    assert paths(wire_server, "POST", MESSAGES) == 0


def test_modelplug_stream_an_error_on_slow_is_the_calls_and_a_fallback_chain_takes_it(
    make_client: Any,
    modelplug_config_dir: Any,
    wire_server: WireServer,
    fake_time: FakeTime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from modelplug_deadline import DeadlinePolicy
    from modelplug_kit.testing import load_recording

    from .conftest import ONE, RECORDINGS, TEST_KEY, batch_json, settings_toml

    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    toml = settings_toml(wire_server, 'step_limit = "20m"')
    toml += '[fallbacks]\nnightly = ["echo"]\n[fallback]\nretries = 0\n'
    (modelplug_config_dir / "config.toml").write_text(toml)
    client = make_client(DeadlinePolicy(clock=fake_time), entry_points=True)
    wire_server.add_json(batch_json(wire_server, "in_progress"), path=BATCHES)
    wire_server.add_json(batch_json(wire_server, "ended"), path=ONE)
    wire_server.add_json(batch_json(wire_server, "ended"), path=ONE)
    wire_server.add(
        load_recording(RECORDINGS / "batch_errored.jsonl"),
        path=f"{ONE}/results",
        content_type="application/binary",
    )
    response = client.complete("nightly", "hi")
    # The batch failed (overloaded): not a deadline's move to fast, the fallback's turn.
    assert response.model == "echo/echo"
    assert paths(wire_server, "POST", MESSAGES) == 0
    assert paths(wire_server, "POST", CANCEL) == 0
