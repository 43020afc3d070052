"""A Route from resolve() can stand in for the spec of many calls: used as it is, never
resolved again (what a server answering one model thousands of times a second wants)."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from modelplug.client.client import Client
from modelplug.contract.routes import Price
from modelplug.contract.types import Done, Usage
from modelplug.testing import FakeModel, text


class CountingFake(FakeModel):
    """A fake model that counts how often it is asked to resolve a spec."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.resolved = 0

    def modelplug_resolve(self, spec: str, provider_type: str | None) -> Any:
        self.resolved += 1
        return super().modelplug_resolve(spec, provider_type)

    modelplug_resolve.modelplug_impl = FakeModel.modelplug_resolve.modelplug_impl  # type: ignore[attr-defined]


def test_a_route_given_as_the_spec_is_called_without_resolving_again(make_client: Any) -> None:
    model = CountingFake([text("one"), text("two"), text("three")])
    client: Client = make_client(model)
    route = client.resolve("fake/small")
    assert model.resolved == 1
    assert client.complete(route, "a").text == "one"
    assert [e.type for e in client.stream(route, "b")][-1] == "done"
    assert asyncio.run(client.acomplete(route, "c")).text == "three"
    assert model.resolved == 1
    assert [r.name for r in model.routes] == ["fake/small"] * 3


def test_a_kept_route_is_used_as_it_is_even_when_settings_would_now_say_otherwise(
    make_client: Any,
) -> None:
    # The caller owns a route it keeps: a price set on it is the price the call gets.
    model = FakeModel([text("hi", usage=Usage(input=1_000_000, output=0))])
    client: Client = make_client(model)
    route = client.resolve("fake/small")
    priced = dataclasses.replace(
        route, info=dataclasses.replace(route.info, price=Price(input=2, output=4))
    )
    response = client.complete(priced, "a")
    assert response.cost is not None and response.cost.amount == 2


def test_a_string_spec_is_resolved_on_every_call(make_client: Any) -> None:
    model = CountingFake([text("one"), text("two")])
    client: Client = make_client(model)
    client.complete("fake/small", "a")
    client.complete("fake/small", "b")
    assert model.resolved == 2


def test_route_for_resolves_a_spec_and_passes_a_route_through(make_client: Any) -> None:
    client: Client = make_client(FakeModel(), config={"aliases": {"quick": "fake/small"}})
    route = client.route_for("quick")
    assert (route.name, route.spec) == ("fake/small", "quick")
    assert client.route_for(route) is route


def test_astream_with_a_route_ends_in_one_done(make_client: Any) -> None:
    client: Client = make_client(FakeModel([text("hello")]))
    route = client.resolve("fake/m")

    async def run() -> list[Any]:
        return [event async for event in client.astream(route, "hi")]

    events = asyncio.run(run())
    assert [type(e) for e in events].count(Done) == 1
    assert events[-1].response.model == "fake/m"


def test_a_wrong_kind_of_spec_is_refused_with_its_type_named(make_client: Any) -> None:
    client: Client = make_client(FakeModel())
    with pytest.raises(TypeError, match=r"a Route from Client\.resolve\(\), not int"):
        client.complete(42, "a")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not list"):
        client.resolve(["fake/m"])  # type: ignore[arg-type]
