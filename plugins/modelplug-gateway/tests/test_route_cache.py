"""Each model name is resolved at most once a second (an injected clock here), a name
that does not resolve is asked again every call, and the cache stays bounded."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from modelplug import Client, ModelplugError
from modelplug.testing import FakeModel, text
from modelplug_gateway.route_cache import RouteCache


class CountingFake(FakeModel):
    """A fake model that counts the specs it is asked to resolve."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.resolved: list[str] = []

    def modelplug_resolve(self, spec: str, provider_type: str | None) -> Any:
        self.resolved.append(spec)
        return super().modelplug_resolve(spec, provider_type)

    modelplug_resolve.modelplug_impl = FakeModel.modelplug_resolve.modelplug_impl  # type: ignore[attr-defined]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def client_with(model: FakeModel, **config: Any) -> Client:
    return Client(
        plugins=[model],
        user_config="/nonexistent/modelplug.toml",
        project_dir="/",
        environ={},
        entry_points=False,
        config=config or None,
    )


def test_a_name_is_resolved_once_within_the_ttl_and_again_after_it() -> None:
    model = CountingFake()
    clock = Clock()
    routes = RouteCache(client_with(model), ttl=1.0, clock=clock)
    first = routes.get("fake/m")
    clock.now += 0.99
    assert routes.get("fake/m") is first
    assert model.resolved == ["fake/m"]
    clock.now += 0.02
    again = routes.get("fake/m")
    assert again is not first and again.name == "fake/m"
    assert model.resolved == ["fake/m", "fake/m"]


def test_an_alias_is_kept_under_the_name_the_caller_used() -> None:
    model = CountingFake()
    routes = RouteCache(client_with(model, aliases={"quick": "fake/small"}), clock=Clock())
    route = routes.get("quick")
    assert (route.name, route.spec) == ("fake/small", "quick")
    assert routes.get("fake/small").spec == "fake/small"
    assert model.resolved == ["fake/small", "fake/small"]


def test_a_name_that_does_not_resolve_is_never_kept() -> None:
    routes = RouteCache(client_with(CountingFake()), clock=Clock())
    for _ in range(2):
        with pytest.raises(ModelplugError, match="nobody"):
            routes.get("nobody/m")


def test_the_cache_starts_over_past_its_size() -> None:
    model = CountingFake()
    routes = RouteCache(client_with(model), size=3, clock=Clock())
    for name in ("fake/a", "fake/b", "fake/c", "fake/d"):
        routes.get(name)
    routes.get("fake/d")  # kept: the cache started over with it
    routes.get("fake/a")  # forgotten with the rest
    assert model.resolved == ["fake/a", "fake/b", "fake/c", "fake/d", "fake/a"]


def test_calls_through_the_gateway_resolve_a_name_once_and_answer_from_its_route(
    make_gateway: Any, serve: Any
) -> None:
    model = CountingFake([text("one"), text("two"), text("three")])
    app = make_gateway(client=client_with(model))
    body = {"model": "fake/m", "messages": [{"role": "user", "content": "hi"}]}
    with serve(app) as url:
        answers = [httpx2.post(f"{url}/v1/chat/completions", json=body) for _ in range(3)]
        missing = httpx2.post(f"{url}/v1/chat/completions", json={**body, "model": "nobody/m"})
    assert [a.json()["choices"][0]["message"]["content"] for a in answers] == [
        "one",
        "two",
        "three",
    ]
    assert [a.headers["x-modelplug-route"] for a in answers] == ["fake/m"] * 3
    assert model.resolved == ["fake/m", "nobody/m"]  # the fake is asked, says no
    assert missing.status_code == 404 and "nobody" in missing.json()["error"]["message"]


def test_a_streamed_call_to_a_name_that_does_not_resolve_is_a_404_in_its_shape(
    make_gateway: Any, serve: Any
) -> None:
    app = make_gateway(client=client_with(CountingFake()))
    body = {"model": "nobody/m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with serve(app) as url:
        answer = httpx2.post(f"{url}/v1/chat/completions", json=body)
        messages = httpx2.post(
            f"{url}/v1/messages",
            json={**body, "max_tokens": 10},
            headers={"anthropic-version": "2023-06-01"},
        )
    assert answer.status_code == 404 and "nobody" in answer.json()["error"]["message"]
    assert messages.status_code == 404
    assert messages.json()["type"] == "error" and "nobody" in messages.json()["error"]["message"]


def test_setting_another_client_starts_the_routes_anew(make_gateway: Any) -> None:
    first, second = CountingFake([text("a")]), CountingFake([text("b")])
    app = make_gateway(client=client_with(first))
    app.routes.get("fake/m")
    app.client = client_with(second)
    assert app.routes.get("fake/m").name == "fake/m"
    assert (first.resolved, second.resolved) == (["fake/m"], ["fake/m"])
