"""A server that asks for a longer wait than ``max_retry_after`` will not answer soon:
the call falls back at once (or gives up at once), and the model cools down for what
the server asked. Before, the policy waited the capped time for pointless retries."""

from __future__ import annotations

from typing import Any

import pytest
from modelplug import ModelError
from modelplug.contract.types import Notice
from modelplug.testing import FakeModel, text

CHAIN = {"fallbacks": {"a/m": ["b/m"]}}


def test_modelplug_stream_falls_back_at_once_when_the_server_asks_for_a_day(
    client_with: Any, clock: Any, store: Any, kit: Any
) -> None:
    first, second = kit.two_models([kit.rate_limited("86400"), text("a")], [text("b")])
    client = client_with(first, second, config=CHAIN, options={"max_retry_after": 30})
    started = clock.now
    seen: list[Any] = []

    response = client.complete("a/m", "hi", on_event=seen.append)

    assert response.text == "b"
    assert clock.sleeps == []  # no capped wait, no retry of a/m
    assert clock.now == started
    assert len(first.requests) == 1
    gave_up, switch = [e for e in seen if isinstance(e, Notice)]
    assert gave_up.details["phase"] == "gave_up"
    assert "the server asked to wait 86400 s, more than max_retry_after (30 s)" in (gave_up.message)
    assert switch.kind == "fallback" and switch.details["to"] == "b/m"
    assert store.remaining("a/m") == 86400.0  # what the server asked, not the 60 s default


def test_modelplug_stream_gives_up_at_once_without_a_fallback(
    client_with: Any, clock: Any, kit: Any
) -> None:
    fake = FakeModel([kit.rate_limited("120"), text("never")])
    client = client_with(fake, options={"max_retry_after": 10})
    seen: list[Any] = []

    with pytest.raises(ModelError) as caught:
        client.complete("fake/m", "hi", on_event=seen.append)

    assert caught.value.kind == "rate_limit"
    assert clock.sleeps == []
    assert len(fake.requests) == 1
    said = [e for e in seen if isinstance(e, Notice)]
    assert [n.details["phase"] for n in said] == ["gave_up"]
    assert "asked to wait 120 s, more than max_retry_after (10 s)" in said[0].message


def test_modelplug_stream_still_waits_a_retry_after_within_the_cap(
    client_with: Any, clock: Any, kit: Any
) -> None:
    fake = FakeModel([kit.rate_limited("10"), text("ok")])
    client = client_with(fake, options={"max_retry_after": 10})

    assert client.complete("fake/m", "hi").text == "ok"
    assert clock.sleeps == [10.0]
