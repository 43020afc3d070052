"""Roles (resolved by core's Client.expand) as this plugin relies on them: a built-in or
user-defined role names a spec, an unset one is the default model, a role never names a
role, a cycle is an error, and a role's own fallback chain applies."""

from __future__ import annotations

from typing import Any

import pytest
from modelplug import ModelplugError
from modelplug.testing import FakeModel, text


@pytest.mark.parametrize("role", ["smart", "worker", "explore", "compact"])
def test_builtin_roles_resolve_through_settings(client_with: Any, role: str) -> None:
    client = client_with(FakeModel(provider="a"), config={"roles": {role: f"a/{role}-model"}})

    route = client.resolve(role)

    assert route.name == f"a/{role}-model"
    assert route.role == role
    assert route.spec == role


def test_a_user_defined_role_resolves_like_a_builtin(client_with: Any) -> None:
    client = client_with(FakeModel(provider="a"), config={"roles": {"reviewer": "a/careful"}})

    assert client.resolve("reviewer").name == "a/careful"


def test_an_unset_role_is_the_default_model(client_with: Any) -> None:
    client = client_with(FakeModel(provider="a"), config={"model": "a/main"})

    route = client.resolve("explore")

    assert route.name == "a/main"
    assert route.role == "explore"


def test_a_role_naming_a_role_is_an_error(client_with: Any) -> None:
    client = client_with(FakeModel(provider="a"), config={"roles": {"worker": "smart"}})

    with pytest.raises(ModelplugError, match="never another role"):
        client.resolve("worker")


def test_a_cycle_of_aliases_is_an_error(client_with: Any) -> None:
    config = {"aliases": {"fast": "quick", "quick": "fast"}}
    client = client_with(FakeModel(provider="a"), config=config)

    with pytest.raises(ModelplugError, match="cycle: fast -> quick -> fast"):
        client.resolve("fast")


def test_modelplug_stream_falls_back_along_a_roles_chain(
    client_with: Any, clock: Any, kit: Any
) -> None:
    first, second = kit.two_models([kit.rate_limited()], [text("the worker's fallback")])
    config = {"roles": {"worker": "a/m"}, "fallbacks": {"worker": ["b/m"]}}
    client = client_with(first, second, config=config, options={"retries": 0})

    response = client.complete("worker", "hi", on_event=lambda e: None)

    assert response.model == "b/m"
    assert response.text == "the worker's fallback"
    assert first.routes[0].role == "worker"


def test_modelplug_stream_a_fallback_may_itself_be_a_role(
    client_with: Any, clock: Any, kit: Any
) -> None:
    first, second = kit.two_models([kit.rate_limited()], [text("via the compact role")])
    config = {"roles": {"compact": "b/small"}, "fallbacks": {"a/m": ["compact"]}}
    client = client_with(first, second, config=config, options={"retries": 0})

    response = client.complete("a/m", "hi", on_event=lambda e: None)

    assert response.model == "b/small"
