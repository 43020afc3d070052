"""A group's name works wherever a model spec does: Client, aliases, roles, fallback
chains; a wrong table is a ConfigError that names it; [groups] is no unknown section."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from modelplug import ConfigError


def test_modelplug_resolve_answers_a_group_name(client_with: Any, kit: Any) -> None:
    client = client_with(*kit.labs("a", "b"), groups={"g": {"deployments": ["a/m", "b/m"]}})
    route = client.resolve("g")
    assert (route.provider, route.model, route.endpoint.type) == ("group", "g", "group")
    assert client.resolve("group/g").name == "group/g"
    assert client.resolve("a/m").name == "a/m"  # other specs are left to their plugins


def test_aliases_and_roles_may_name_a_group(client_with: Any, kit: Any) -> None:
    client = client_with(
        *kit.labs("a", "b"),
        groups={"g": {"deployments": ["a/m", "b/m"]}},
        config={"aliases": {"fast": "g"}, "roles": {"worker": "g"}},
    )
    assert client.resolve("fast").name == "group/g"
    assert client.resolve("worker").role == "worker"
    assert {client.complete("fast", "hi").model, client.complete("worker", "hi").model} == {
        "a/m",
        "b/m",
    }


def test_a_deployment_may_be_an_alias(client_with: Any, kit: Any) -> None:
    client = client_with(
        *kit.labs("a"),
        groups={"g": {"deployments": ["mine"]}},
        config={"aliases": {"mine": "a/m"}},
    )
    assert client.complete("g", "hi").model == "a/m"


def test_a_fallback_chain_may_name_a_group(make_client: Any, router: Any, kit: Any) -> None:
    broken = kit.Lab("broken", error=kit.HTTPError(401, "bad key"))
    client = make_client(
        router,
        broken,
        *kit.labs("a"),
        "modelplug-fallback",
        config={
            "groups": {"g": {"deployments": ["a/m"]}},
            "fallbacks": {"broken/m": ["g"]},
            "fallback": {"retries": 0},
        },
    )
    assert client.complete("broken/m", "hi").model == "a/m"


def test_groups_is_no_unknown_section(client_with: Any, kit: Any) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        client_with(*kit.labs("a"), groups={"g": {"deployments": ["a/m"]}})
    assert not [w for w in caught if "unknown settings section" in str(w.message)]


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ({}, "needs deployments"),
        ({"deployments": []}, "needs deployments"),
        ({"deployments": ["a/m"], "strategy": "fastest"}, "strategy must be one of"),
        ({"deployments": ["a/m"], "stratgy": "cost"}, "unknown key 'stratgy'"),
        ({"deployments": [{"spec": "a/m", "weight": 0}]}, "weight must be above 0"),
        ({"deployments": [{"spec": "a/m", "rpm": 1.5}]}, "rpm must be a whole number"),
        ({"deployments": [{"spec": "a/m", "tpmm": 5}]}, "unknown key 'tpmm'"),
        ({"deployments": [{"weight": 2}]}, "each is a spec or a table with a spec"),
        ({"deployments": ["a/m", "a/m"]}, "twice"),
        ({"deployments": ["g"]}, "names itself"),
    ],
)
def test_a_wrong_group_table_is_a_config_error_naming_it(
    client_with: Any, kit: Any, table: dict[str, Any], said: str
) -> None:
    client = client_with(*kit.labs("a"), groups={"g": table})
    with pytest.raises(ConfigError, match=said) as raised:
        client.resolve("g")
    assert "[groups.g]" in str(raised.value)


@pytest.mark.parametrize("inner", ["h", "group/h"])
def test_a_group_among_a_groups_deployments_is_a_config_error(
    client_with: Any, kit: Any, inner: str
) -> None:
    # The router opens a deployment's stream past itself: a group there never answers
    # (it failed the call and was cooled down as if it were a broken deployment).
    groups = {"g": {"deployments": [inner, "a/m"]}, "h": {"deployments": ["a/m"]}}
    client = client_with(*kit.labs("a"), groups=groups)
    with pytest.raises(ConfigError, match=f"deployment '{inner}' is a group") as raised:
        client.complete("g", "hi")
    assert "[groups.g]" in str(raised.value) and "fallback chain" in str(raised.value)


def test_a_group_named_through_an_alias_is_the_same_config_error(
    client_with: Any, kit: Any
) -> None:
    groups = {"g": {"deployments": ["inner"]}, "h": {"deployments": ["a/m"]}}
    a = kit.Lab("a")
    client = client_with(a, groups=groups, config={"aliases": {"inner": "h"}})
    with pytest.raises(ConfigError, match="deployment 'inner' is a group"):
        client.complete("g", "hi")
    assert a.calls == 0
