"""Fallback chains: switch only before output and only when the error allows it, say so
in a Notice, and let the model that answered own the Response, its usage and its cost."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from modelplug import MissingKeyError, ModelError
from modelplug.contract.types import Notice, Price, TextDelta, Usage
from modelplug.testing import FakeModel, text

CHAIN = {"fallbacks": {"a/m": ["b/m"]}}


def notices_into(seen: list[Any]) -> Any:
    return lambda event: seen.append(event) if isinstance(event, Notice) else None


def test_modelplug_stream_falls_back_on_a_rate_limit_and_credits_the_fallback(
    client_with: Any, clock: Any, kit: Any
) -> None:
    first = FakeModel(
        [kit.rate_limited()], provider="a", price=Price(input=Decimal(100), output=Decimal(100))
    )
    second = FakeModel(
        [text("from b", usage=Usage(input=1000, output=500))],
        provider="b",
        price=Price(input=Decimal(2), output=Decimal(10)),
    )
    client = client_with(first, second, config=CHAIN, options={"retries": 0})

    events = list(client.stream("a/m", "hi"))

    notice = next(e for e in events if isinstance(e, Notice))
    assert notice.kind == "fallback"
    assert notice.message == "a/m failed (rate limited (429)); falling back to b/m"
    assert notice.details["from"] == "a/m" and notice.details["to"] == "b/m"
    response = events[-1].response
    assert response.text == "from b"
    assert response.model == "b/m"
    assert response.message.model == "b/m"
    assert response.usage.input == 1000
    # b's prices: 1000 * 2 / 1e6 + 500 * 10 / 1e6, never a's 100 per million.
    assert response.cost is not None
    assert response.cost.amount == Decimal("0.007")
    assert len(first.requests) == 1 and len(second.requests) == 1


def test_modelplug_stream_retries_before_it_falls_back(
    client_with: Any, clock: Any, kit: Any
) -> None:
    first, second = kit.two_models([kit.unavailable(), kit.unavailable()], [text("b")])
    client = client_with(first, second, config=CHAIN, options={"retries": 1})
    seen: list[Any] = []

    response = client.complete("a/m", "hi", on_event=notices_into(seen))

    assert response.model == "b/m"
    assert [(n.kind, n.details.get("phase")) for n in seen] == [
        ("retry", "wait"),
        ("retry", "gave_up"),
        ("fallback", None),
    ]
    assert "server error 503" in seen[-1].message


def test_modelplug_stream_does_not_fall_back_on_a_context_overflow(
    client_with: Any, clock: Any, kit: Any
) -> None:
    first, second = kit.two_models([kit.context_overflow()], [text("unreachable")])
    client = client_with(first, second, config=CHAIN)
    seen: list[Any] = []

    with pytest.raises(ModelError) as caught:
        client.complete("a/m", "hi", on_event=seen.append)

    assert caught.value.kind == "context_overflow"
    assert caught.value.route is not None and caught.value.route.name == "a/m"
    assert second.requests == []
    assert seen == []


def test_modelplug_stream_does_not_fall_back_after_output(
    client_with: Any, clock: Any, kit: Any
) -> None:
    talker = kit.TalkThenFail(["partial "], kit.unavailable())
    backup = FakeModel([text("unreachable")], provider="b")
    client = client_with(talker, backup, config={"fallbacks": {"talker/m": ["b/m"]}})

    with pytest.raises(ModelError) as caught:
        list(client.stream("talker/m", "hi"))

    assert backup.requests == []
    assert caught.value.partial is not None and caught.value.partial.text == "partial "


def test_modelplug_stream_a_fallback_failing_after_output_keeps_its_partial(
    client_with: Any, clock: Any, kit: Any
) -> None:
    first = FakeModel([kit.rate_limited()], provider="a")
    talker = kit.TalkThenFail(["half an ", "answer"], kit.unavailable())
    client = client_with(
        first, talker, config={"fallbacks": {"a/m": ["talker/t"]}}, options={"retries": 0}
    )
    events: list[Any] = []

    with pytest.raises(ModelError) as caught:
        for event in client.stream(
            "a/m",
            "hi",
        ):
            events.append(event)

    assert talker.calls == 1
    assert caught.value.route is not None and caught.value.route.name == "talker/t"
    assert caught.value.partial is not None
    assert caught.value.partial.text == "half an answer"
    assert caught.value.partial.model == "talker/t"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "half an answer"


def test_modelplug_stream_skips_a_candidate_without_a_key_and_says_why(
    client_with: Any, clock: Any, kit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KEYED_API_KEY", raising=False)
    first = FakeModel([kit.rate_limited()], provider="a")
    keyed = kit.KeyedProvider()
    last = FakeModel([text("from c")], provider="c")
    config = {"fallbacks": {"a/m": ["keyed/k", "c/m"]}}
    client = client_with(first, keyed, last, config=config, options={"retries": 0})
    seen: list[Any] = []

    response = client.complete("a/m", "hi", on_event=notices_into(seen))

    assert response.model == "c/m"
    assert keyed.calls == 0
    (notice,) = seen
    assert notice.details["to"] == "c/m"
    assert notice.details["skipped"] == [
        {"spec": "keyed/k", "reason": "Set KEYED_API_KEY to use the provider keyed."}
    ]
    assert "skipped keyed/k: Set KEYED_API_KEY" in notice.message


def test_modelplug_stream_skips_a_candidate_no_plugin_serves(
    client_with: Any, clock: Any, kit: Any
) -> None:
    first, second = kit.two_models([kit.rate_limited()], [text("b")])
    config = {"fallbacks": {"a/m": ["nowhere/x", "b/m"]}}
    client = client_with(first, second, config=config, options={"retries": 0})
    seen: list[Any] = []

    response = client.complete("a/m", "hi", on_event=notices_into(seen))

    assert response.model == "b/m"
    assert seen[0].details["skipped"][0]["spec"] == "nowhere/x"
    assert "Unknown provider 'nowhere'" in seen[0].details["skipped"][0]["reason"]


def test_modelplug_stream_a_provider_missing_its_key_at_open_is_skipped(
    client_with: Any, clock: Any, kit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The key is read when the stream starts: the primary itself cannot be used.
    monkeypatch.delenv("KEYED_API_KEY", raising=False)
    keyed = kit.KeyedProvider()
    backup = FakeModel([text("backup")], provider="b")
    client = client_with(keyed, backup, config={"fallbacks": {"keyed/k": ["b/m"]}})
    seen: list[Any] = []

    response = client.complete("keyed/k", "hi", on_event=notices_into(seen))

    assert response.model == "b/m"
    assert keyed.calls == 1
    assert seen[0].message == (
        "keyed/k failed (Set KEYED_API_KEY to use the provider keyed.); falling back to b/m"
    )


def test_modelplug_stream_without_a_chain_a_missing_key_fails_as_before(
    client_with: Any, kit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KEYED_API_KEY", raising=False)
    client = client_with(kit.KeyedProvider())

    with pytest.raises(MissingKeyError, match="Set KEYED_API_KEY"):
        client.complete("keyed/k", "hi")


def test_modelplug_stream_when_every_candidate_fails_raises_the_last_error(
    client_with: Any, clock: Any, kit: Any
) -> None:
    first, second = kit.two_models([kit.rate_limited()], [kit.HTTPError(401, "bad key")])
    client = client_with(first, second, config=CHAIN, options={"retries": 0})

    with pytest.raises(ModelError) as caught:
        client.complete("a/m", "hi", on_event=lambda e: None)

    assert caught.value.kind == "auth"
    assert caught.value.route is not None and caught.value.route.name == "b/m"
    assert "tried a/m, b/m" in str(caught.value)


@pytest.mark.parametrize("key", ["worker", "cheap", "a/m"])
def test_modelplug_stream_finds_the_chain_by_role_then_spec_then_name(
    client_with: Any, clock: Any, kit: Any, key: str
) -> None:
    first, second = kit.two_models([kit.unavailable()], [text("b")])
    config = {
        "roles": {"worker": "a/m"},
        "aliases": {"cheap": "a/m"},
        "fallbacks": {key: ["b/m"]},
    }
    client = client_with(first, second, config=config, options={"retries": 0})
    asked = {"worker": "worker", "cheap": "cheap", "a/m": "a/m"}[key]

    response = client.complete(asked, "hi", on_event=lambda e: None)

    assert response.model == "b/m"


def test_modelplug_stream_prefers_the_roles_chain_over_the_models(
    client_with: Any, clock: Any, kit: Any
) -> None:
    first = FakeModel([kit.unavailable()], provider="a")
    by_role = FakeModel([text("role chain")], provider="r")
    by_name = FakeModel([text("name chain")], provider="n")
    config = {
        "roles": {"worker": "a/m"},
        "fallbacks": {"worker": ["r/m"], "a/m": ["n/m"]},
    }
    client = client_with(first, by_role, by_name, config=config, options={"retries": 0})

    assert client.complete("worker", "hi", on_event=lambda e: None).model == "r/m"
    assert by_name.requests == []
