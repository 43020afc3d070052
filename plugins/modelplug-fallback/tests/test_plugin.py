"""The plugin as pluggy sees it: a ``wrapper=True`` modelplug_stream that re-opens
streams without passing through any fallback policy again, loaded by its entry point
or registered as an object."""

from __future__ import annotations

import dataclasses
from typing import Any

import modelplug_fallback
import pytest
from modelplug import ConfigError, NoProviderError, as_request, hookimpl
from modelplug.contract.types import Endpoint, Notice
from modelplug.testing import FakeModel, text
from modelplug_fallback.options import load_options
from modelplug_fallback.policy import FallbackPolicy, default_policy
from modelplug_fallback.policy_protocol import policies_on


def notice_list(client: Any, spec: str) -> tuple[Any, list[Notice]]:
    seen: list[Notice] = []
    response = client.complete(
        spec, "hi", on_event=lambda e: seen.append(e) if isinstance(e, Notice) else None
    )
    return response, seen


@pytest.fixture
def no_real_sleep(monkeypatch: pytest.MonkeyPatch, clock: Any) -> Any:
    """The entry point's default policy, on the fake clock."""
    monkeypatch.setattr(default_policy(), "sleep", clock.sleep)
    monkeypatch.setattr(default_policy(), "clock", clock)
    return clock


def test_modelplug_stream_is_a_wrapper_hookimpl() -> None:
    marker = modelplug_fallback.modelplug_stream.modelplug_impl
    assert marker["wrapper"] is True
    assert FallbackPolicy.modelplug_stream.modelplug_impl["wrapper"] is True


def test_modelplug_stream_loads_by_entry_point_and_reads_the_fallback_table(
    make_client: Any, no_real_sleep: Any, kit: Any
) -> None:
    fake = FakeModel([kit.unavailable(), kit.unavailable(), kit.unavailable(), text("4th")])
    client = make_client(
        "modelplug-fallback", fake, entry_points=True, config={"fallback": {"retries": 3}}
    )

    response, seen = notice_list(client, "fake/m")

    assert response.text == "4th"
    assert len(fake.requests) == 4  # 1 + 3 retries: one policy, never nested
    assert [n.details["phase"] for n in seen] == ["wait", "wait", "wait", "recovered"]
    assert policies_on(client) == [modelplug_fallback]
    names = {p.name for p in client.plugins() if p.enabled}
    assert "modelplug-fallback" in names


def test_modelplug_stream_as_a_module_never_nests_on_fallback(
    make_client: Any, no_real_sleep: Any, kit: Any
) -> None:
    first, second = kit.two_models([kit.unavailable()] * 3, [kit.unavailable()] * 3)
    config = {"fallbacks": {"a/m": ["b/m"]}}
    client = make_client("modelplug-fallback", first, second, entry_points=True, config=config)

    with pytest.raises(Exception, match="server error 503"):
        notice_list(client, "a/m")

    # Each model: 1 try + 2 retries. A nested policy would multiply these.
    assert len(first.requests) == 3
    assert len(second.requests) == 3


def test_modelplug_stream_as_an_object_never_nests(client_with: Any, clock: Any, kit: Any) -> None:
    first, second = kit.two_models([kit.unavailable()] * 3, [kit.unavailable()] * 2 + [text("b")])
    client = client_with(first, second, config={"fallbacks": {"a/m": ["b/m"]}})

    response, _ = notice_list(client, "a/m")

    assert response.text == "b"
    assert len(first.requests) == 3
    assert len(second.requests) == 3
    assert len(clock.sleeps) == 4


def test_modelplug_stream_module_steps_aside_for_a_registered_policy(
    make_client: Any, clock: Any, store: Any, kit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def must_not_sleep(seconds: float) -> None:
        raise AssertionError("the default policy ran")

    monkeypatch.setattr(default_policy(), "sleep", must_not_sleep)
    policy = FallbackPolicy(
        {"retries": 1}, store=store, clock=clock, sleep=clock.sleep, random=lambda: 0.5
    )
    fake = FakeModel([kit.unavailable(), kit.unavailable(), text("unreachable")])
    client = make_client("modelplug-fallback", policy, fake, entry_points=True)

    with pytest.raises(Exception, match="server error 503"):
        client.complete("fake/m", "hi", on_event=lambda e: None)

    assert len(fake.requests) == 2  # the object's single retry, nothing more
    assert clock.sleeps == [1.0]
    assert set(map(id, policies_on(client))) == {id(modelplug_fallback), id(policy)}


def test_modelplug_stream_returns_none_when_no_provider_serves_the_route(
    client_with: Any,
) -> None:
    client = client_with(FakeModel(provider="a"))
    route = dataclasses.replace(client.resolve("a/m"), endpoint=Endpoint(type="ghost"))

    with pytest.raises(NoProviderError):
        client.open_stream(route, as_request("hi"))


def test_modelplug_stream_warns_of_a_misspelt_setting_by_name(client_with: Any) -> None:
    client = client_with(FakeModel([text("x")]), options={"retrys": 3})

    with pytest.warns(
        UserWarning, match=r"\[fallback\] has unknown option\(s\) retrys; known: retries"
    ):
        assert client.complete("fake/m", "hi").text == "x"


def test_modelplug_stream_rejects_a_wrong_value_by_name(client_with: Any) -> None:
    client = client_with(FakeModel([text("x")]), options={"backoff": "Bearer sk-not-a-number"})

    with pytest.raises(ConfigError, match=r"\[fallback\] backoff: expected a number") as caught:
        client.complete("fake/m", "hi")
    assert "sk-not" not in str(caught.value)


def test_modelplug_stream_passes_a_success_through_untouched(client_with: Any) -> None:
    fake = FakeModel([text("plain")])
    client = client_with(fake)

    events = list(client.stream("fake/m", "hi"))

    assert [type(e).__name__ for e in events] == ["TextDelta", "Done"]
    assert events[-1].response.model == "fake/m"


class OpensThenFails:
    """A provider (``eager/...``) that raises while *opening* its stream, as one that
    connects before returning its iterator would."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.opened = 0

    @hookimpl
    def modelplug_resolve(self, spec: str) -> Any:
        from modelplug.contract.types import Endpoint, Route

        provider, _, model = spec.partition("/")
        if provider != "eager":
            return None
        return Route(provider=provider, model=model, endpoint=Endpoint(type="test", local=True))

    @hookimpl
    def modelplug_stream(self, route: Any, request: Any) -> Any:
        if route.provider != "eager":
            return None
        self.opened += 1
        if self.errors:
            raise self.errors.pop(0)
        return FakeModel([text("opened at last")], provider="eager")._play(route, request)


def test_modelplug_stream_retries_an_error_raised_while_opening(
    client_with: Any, clock: Any, kit: Any
) -> None:
    eager = OpensThenFails(kit.unavailable())
    client = client_with(eager)

    response, seen = notice_list(client, "eager/m")

    assert eager.opened == 2
    assert response.text == "opened at last"
    assert [n.details["phase"] for n in seen] == ["wait", "recovered"]


def test_modelplug_stream_lets_an_opening_error_it_cannot_help_through(
    client_with: Any, clock: Any, kit: Any
) -> None:
    eager = OpensThenFails(kit.HTTPError(400, "invalid parameter"))
    client = client_with(eager)

    with pytest.raises(Exception, match="invalid parameter") as caught:
        client.complete("eager/m", "hi")

    assert type(caught.value).__name__ == "HTTPError"  # raised at open, as it was
    assert eager.opened == 1


def test_modelplug_stream_falls_back_when_the_primary_cannot_open_for_a_missing_key(
    client_with: Any, clock: Any
) -> None:
    from modelplug import MissingKeyError

    eager = OpensThenFails(MissingKeyError("EAGER_KEY", "eager"))
    backup = FakeModel([text("backup answered")], provider="b")
    client = client_with(eager, backup, config={"fallbacks": {"eager/m": ["b/m"]}})

    response, seen = notice_list(client, "eager/m")

    assert response.model == "b/m"
    assert seen[0].message == (
        "eager/m failed (Set EAGER_KEY to use the provider eager.); falling back to b/m"
    )


class FailsLoudly:
    """Stands in for what only a failure needs: building it on a success fails the test."""

    def __init__(self, *args: object) -> None:
        raise AssertionError("built for a call that succeeded")


def test_modelplug_stream_builds_nothing_for_a_failure_on_a_success(
    client_with: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import modelplug_fallback.attempts as attempts_module

    monkeypatch.setattr(attempts_module, "Candidates", FailsLoudly)
    monkeypatch.setattr(attempts_module, "policies_on", FailsLoudly)
    config = {"fallbacks": {"fake/m": ["nowhere/x", "fake/backup"]}}
    client = client_with(FakeModel([text("one"), text("two")]), config=config)

    assert client.complete("fake/m", "hi").text == "one"
    assert client.complete("fake/m", "hi").text == "two"


def test_modelplug_stream_validates_the_options_once_per_client(
    policy: Any, make_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import modelplug_fallback.policy as policy_module

    validated: list[object] = []

    def counting_load_options(settings: Any, overrides: Any) -> Any:
        validated.append(settings)
        return load_options(settings, overrides)

    monkeypatch.setattr(policy_module, "load_options", counting_load_options)
    shared = policy(retries=1)
    first = make_client(shared, FakeModel([text("x")] * 3))
    second = make_client(shared, FakeModel([text("y")]))

    for _ in range(3):
        first.complete("fake/m", "hi")
    second.complete("fake/m", "hi")

    assert validated == [first.settings, second.settings]


def test_modelplug_stream_rejects_a_wrong_table_on_every_call_of_its_client(
    make_client: Any,
) -> None:
    good = make_client("modelplug-fallback", FakeModel([text("fine")]), entry_points=True)
    bad = make_client(
        "modelplug-fallback",
        FakeModel([text("never")] * 2),
        entry_points=True,
        config={"fallback": {"retries": -1}},
    )

    assert good.complete("fake/m", "hi").text == "fine"
    for _ in range(2):  # a bad table is never taken for a validated one
        with pytest.raises(ConfigError, match=r"\[fallback\] retries: must be at least 0"):
            bad.complete("fake/m", "hi")


def test_modelplug_stream_falls_back_as_before_after_successful_calls(
    client_with: Any, clock: Any, kit: Any
) -> None:
    first, second = kit.two_models([text("a"), kit.rate_limited()], [text("b")])
    config = {"fallbacks": {"a/m": ["nowhere/x", "b/m"]}}
    client = client_with(first, second, config=config, options={"retries": 0})

    assert client.complete("a/m", "hi").text == "a"
    response, seen = notice_list(client, "a/m")

    assert response.model == "b/m"
    (notice,) = seen
    assert notice.message.startswith(
        "a/m failed (rate limited (429)); falling back to b/m (skipped nowhere/x: "
        "Unknown provider 'nowhere'"
    )
