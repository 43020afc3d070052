"""Retries of the same model: only before output, only for retryable errors, bounded by
a count, a Retry-After cap and a wall-clock budget, each wait narrated as a Notice."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from modelplug import ModelError
from modelplug.contract.types import Done, Notice, TextDelta, ThinkingDelta, ToolCallStart
from modelplug.testing import FakeModel, text


def notices_of(events: list[Any]) -> list[Notice]:
    return [e for e in events if isinstance(e, Notice)]


def test_modelplug_stream_retries_a_429_after_the_retry_after_it_asked_for(
    client_with: Any, clock: Any, kit: Any
) -> None:
    fake = FakeModel([kit.rate_limited("2"), text("hello")])
    client = client_with(fake)

    events = list(client.stream("fake/m", "hi"))

    assert clock.sleeps == [2.0]
    assert len(fake.requests) == 2
    wait, recovered = notices_of(events)
    assert wait.kind == "retry"
    assert wait.delay == 2.0
    assert wait.details["server_asked"] is True
    assert wait.details["attempt"] == 1 and wait.details["retries"] == 2
    assert "fake/m" in wait.message and "rate limited (429)" in wait.message
    assert "retry 1 of 2" in wait.message and "the server asked for 2.0 s" in wait.message
    assert recovered.details["phase"] == "recovered"
    assert "recovered on retry 1 of 2" in recovered.message
    # The recovery is announced before the answer, and the answer is the second try's.
    assert events.index(recovered) < next(
        i for i, e in enumerate(events) if isinstance(e, TextDelta)
    )
    assert events[-1].response.text == "hello"


def test_modelplug_stream_retries_503_twice_on_an_exponential_schedule(
    client_with: Any, clock: Any, kit: Any
) -> None:
    fake = FakeModel([kit.unavailable(), kit.unavailable(), text("third time")])
    client = client_with(fake, options={"backoff": 1.5})

    response = client.complete("fake/m", "hi", on_event=lambda e: None)

    assert response.text == "third time"
    # random() is 0.5 in these tests: no jitter, so the schedule is exactly 1.5, 3.0.
    assert clock.sleeps == [1.5, 3.0]
    assert len(fake.requests) == 3


def test_modelplug_stream_jitters_its_own_waits_but_not_the_servers(
    make_client: Any, clock: Any, store: Any, kit: Any
) -> None:
    from modelplug_fallback.policy import FallbackPolicy

    policy = FallbackPolicy(
        {"backoff": 2.0, "jitter": 0.5},
        store=store,
        clock=clock,
        sleep=clock.sleep,
        random=lambda: 1.0,
    )
    fake = FakeModel([kit.unavailable(), kit.rate_limited("4"), text("ok")])
    client = make_client(policy, fake)

    client.complete("fake/m", "hi", on_event=lambda e: None)

    assert clock.sleeps == [3.0, 4.0]  # 2.0 * (1 + 0.5), then the server's 4 s untouched


def test_modelplug_stream_gives_up_when_the_budget_would_be_passed(
    client_with: Any, clock: Any, kit: Any
) -> None:
    fake = FakeModel([kit.rate_limited("3"), kit.rate_limited("3"), text("never")])
    client = client_with(fake, options={"retries": 5, "budget": 5})
    seen: list[Any] = []

    with pytest.raises(ModelError) as caught:
        client.complete("fake/m", "hi", on_event=seen.append)

    assert caught.value.kind == "rate_limit"
    assert clock.sleeps == [3.0]  # the second 3 s wait would end at 6 s > 5 s
    assert len(fake.requests) == 2
    gave_up = seen[-1]
    assert gave_up.details["phase"] == "gave_up"
    assert "5 s budget" in gave_up.message and "giving up after 1 of 5 retries" in gave_up.message
    assert fake.remaining == 1


def test_modelplug_stream_gives_up_after_the_last_retry(
    client_with: Any, clock: Any, kit: Any
) -> None:
    fake = FakeModel([kit.unavailable()] * 3)
    client = client_with(fake)
    seen: list[Any] = []

    with pytest.raises(ModelError) as caught:
        client.complete("fake/m", "hi", on_event=seen.append)

    assert caught.value.kind == "transient"
    assert len(fake.requests) == 3
    assert [n.details["phase"] for n in seen] == ["wait", "wait", "gave_up"]
    assert "no retries left" in seen[-1].message


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (lambda kit: kit.context_overflow(), "context_overflow"),
        (lambda kit: kit.HTTPError(400, "invalid parameter"), "bad_request"),
        (lambda kit: kit.HTTPError(401, "bad key"), "auth"),
    ],
)
def test_modelplug_stream_never_retries_what_would_fail_again(
    client_with: Any, clock: Any, kit: Any, error: Any, kind: str
) -> None:
    fake = FakeModel([error(kit), text("unreachable")])
    client = client_with(fake)
    seen: list[Any] = []

    with pytest.raises(ModelError) as caught:
        client.complete("fake/m", "hi", on_event=seen.append)

    assert caught.value.kind == kind
    assert len(fake.requests) == 1
    assert clock.sleeps == []
    assert seen == []


def test_modelplug_stream_with_retries_off_does_not_retry(
    client_with: Any, clock: Any, kit: Any
) -> None:
    fake = FakeModel([kit.unavailable(), text("unreachable")])
    client = client_with(fake, options={"retries": 0})
    seen: list[Any] = []

    with pytest.raises(ModelError):
        client.complete("fake/m", "hi", on_event=seen.append)

    assert len(fake.requests) == 1
    assert seen == []  # nothing waited, so nothing to narrate


def test_modelplug_stream_never_restarts_after_output(
    client_with: Any, clock: Any, kit: Any
) -> None:
    talker = kit.TalkThenFail(["Hel", "lo"], kit.unavailable())
    client = client_with(talker)
    events: list[Any] = []

    with pytest.raises(ModelError) as caught:
        for event in client.stream("talker/m", "hi"):
            events.append(event)

    assert talker.calls == 1
    assert clock.sleeps == []
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo"]
    assert not any(isinstance(e, Notice) for e in events)
    assert caught.value.kind == "transient"
    assert caught.value.partial is not None
    assert caught.value.partial.text == "Hello"
    assert caught.value.partial.model == "talker/m"


def test_modelplug_stream_is_not_retried_when_cancelled(client_with: Any, clock: Any) -> None:
    fake = FakeModel([text("a b c d")], delay=0.5)
    client = client_with(fake)

    async def consume() -> None:
        async for _ in client.astream("fake/m", "hi"):
            pass

    async def cancel_it() -> None:
        task = asyncio.create_task(consume())
        await asyncio.sleep(0.05)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancel_it())

    assert len(fake.requests) == 1
    assert clock.sleeps == []


def test_modelplug_stream_notices_show_on_the_async_client(
    client_with: Any, clock: Any, kit: Any
) -> None:
    fake = FakeModel([kit.rate_limited("1"), text("async ok")])
    client = client_with(fake)

    async def run() -> list[Any]:
        return [event async for event in client.astream("fake/m", "hi")]

    events = asyncio.run(run())

    kinds = [(e.kind, e.details["phase"]) for e in notices_of(events)]
    assert kinds == [("retry", "wait"), ("retry", "recovered")]
    assert isinstance(events[-1], Done) and events[-1].response.text == "async ok"


def test_modelplug_stream_notices_are_logged_by_complete_without_on_event(
    client_with: Any, clock: Any, kit: Any, caplog: pytest.LogCaptureFixture
) -> None:
    fake = FakeModel([kit.rate_limited("1"), text("logged")])
    client = client_with(fake)

    with caplog.at_level("WARNING", logger="modelplug"):
        response = client.complete("fake/m", "hi")

    assert response.text == "logged"
    messages = [r.getMessage() for r in caplog.records]
    assert any("retry 1 of 2 in 1.0 s" in m for m in messages)
    assert any("recovered on retry 1 of 2" in m for m in messages)


def test_modelplug_stream_notices_show_in_the_cli(
    client_with: Any, clock: Any, kit: Any, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    cli = pytest.importorskip("modelplug.cli")
    fake = FakeModel([kit.rate_limited("1"), text("cli ok")])
    client = client_with(fake)
    monkeypatch.setattr(cli, "Client", lambda *a, **k: client)

    code = cli.main(["chat", "-m", "fake/m", "hi"])

    out, err = capsys.readouterr()
    assert code == 0
    assert out == "cli ok\n"
    assert "modelplug: fake/m: rate limited (429); retry 1 of 2 in 1.0 s" in err
    assert "modelplug: fake/m: recovered on retry 1 of 2" in err


def test_modelplug_stream_a_providers_notice_is_not_output(
    client_with: Any, clock: Any, kit: Any
) -> None:
    heads_up = Notice(kind="queue", message="queued behind 3 requests")
    scripted = kit.Scripted(([heads_up], kit.unavailable()), ([], None))
    client = client_with(scripted)

    events = list(client.stream("scripted/m", "hi"))

    assert scripted.opened == 2
    assert events[0] == heads_up
    assert events[-1].response.text == "scripted"


@pytest.mark.parametrize(
    "first",
    [
        TextDelta(text="a"),
        ThinkingDelta(text="hmm"),
        ToolCallStart(id="call_1", name="search", index=0),
    ],
)
def test_modelplug_stream_any_delta_or_tool_call_is_output(
    client_with: Any, clock: Any, kit: Any, first: Any
) -> None:
    scripted = kit.Scripted(([first], kit.unavailable()), ([], None))
    client = client_with(scripted)

    with pytest.raises(ModelError, match="server error 503"):
        list(client.stream("scripted/m", "hi"))

    assert scripted.opened == 1
    assert clock.sleeps == []
