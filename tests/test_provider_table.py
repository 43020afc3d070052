"""A provider type's side of the user's [providers.NAME] tables: the names it declares,
the Endpoint of a user's provider, and the keys its type takes beyond core's."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from modelplug import ModelplugWarning
from modelplug.plugin import (
    ConfigError,
    Route,
    declared_providers,
    hookimpl,
    provider_options,
    user_endpoint,
)

TYPE = "acme"


@dataclass(frozen=True)
class AcmeTable:
    region: str = "eu-west-1"
    replicas: int = field(default=1, metadata={"gt": 0})


class Acme:
    """A provider type with one built-in name and a key of its own, ``region``."""

    @hookimpl
    def modelplug_providers(self, settings):
        return declared_providers(settings, TYPE, builtin=["acme"], options=AcmeTable)

    @hookimpl
    def modelplug_resolve(self, spec, settings, provider_type):
        name, _, model = spec.partition("/")
        if provider_type != TYPE:
            return None
        endpoint = user_endpoint(
            settings,
            name,
            TYPE,
            base_url="https://api.acme.example/v1",
            api_key_env="ACME_API_KEY",
            servers=["acme-server"],
            options=AcmeTable,
        )
        if endpoint is None:
            return None
        return Route(provider=name, model=model, endpoint=endpoint)


def providers(**tables):
    return {"providers": tables}


def test_declared_providers_lists_builtins_and_the_users_providers_of_the_type(make_client):
    client = make_client(
        Acme(), config=providers(work={"type": TYPE}, other={"type": "openai-compatible"})
    )
    names = {d.name: d for d in declared_providers(client.settings, TYPE, builtin=["acme"])}
    assert sorted(names) == ["acme", "work"]
    assert names["work"].type == TYPE


def test_a_builtin_name_the_user_gave_another_type_is_not_declared(make_client):
    client = make_client(Acme(), config=providers(acme={"type": "openai-compatible"}))
    assert declared_providers(client.settings, TYPE, builtin=["acme"]) == []


def test_user_endpoint_applies_the_types_defaults_and_reads_its_own_keys(make_client):
    client = make_client(Acme(), config=providers(work={"type": TYPE, "region": "us-east-2"}))
    route = client.resolve("work/m1")
    assert route.endpoint.base_url == "https://api.acme.example/v1"
    assert route.endpoint.api_key_env == "ACME_API_KEY"
    assert route.endpoint.options == {"region": "us-east-2", "replicas": 1}
    assert not route.endpoint.local


def test_a_table_that_names_no_key_has_none_and_a_keyless_loopback_server_is_local(make_client):
    # api_key_env given as None (from code; TOML has no null): "no key", not the default.
    table = {"type": TYPE, "base_url": "http://127.0.0.1:9/v1", "api_key_env": None}
    route = make_client(Acme(), config=providers(box=table)).resolve("box/m1")
    assert route.endpoint.api_key_env is None
    assert route.endpoint.local


def test_a_server_the_type_does_not_know_is_an_error_naming_the_known_ones(make_client):
    client = make_client(Acme(), config=providers(work={"type": TYPE, "server": "vllm"}))
    with pytest.raises(ConfigError, match=r"server = 'vllm'.*use one of acme-server"):
        client.resolve("work/m1")


def test_a_wrong_value_of_a_declared_key_names_the_table_and_the_key(make_client):
    client = make_client(Acme(), config=providers(work={"type": TYPE, "replicas": 0}))
    with pytest.raises(ConfigError, match=r"\[providers.work\] replicas: must be greater than 0"):
        client.resolve("work/m1")
    with pytest.raises(ConfigError, match=r"\[providers.work\] replicas"):
        provider_options(client.settings, "work", AcmeTable)


def test_an_unknown_key_is_one_warning_naming_the_keys_the_type_knows(make_client):
    client = make_client(Acme(), config=providers(work={"type": TYPE, "regoin": "x"}))
    with pytest.warns(ModelplugWarning) as caught:
        client.resolve("work/m1")
        client.resolve("work/m2")
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1
    assert "[providers.work] has unknown key(s) regoin for type 'acme'" in messages[0]
    assert "region" in messages[0] and "base_url" in messages[0]


def test_a_type_that_declares_no_keys_warns_about_every_extra_key(make_client):
    import modelplug_openai_compat

    table = {"type": "openai-compatible", "base_url": "http://127.0.0.1:9/v1", "region": "x"}
    client = make_client(modelplug_openai_compat, config=providers(box=table))
    with pytest.warns(ModelplugWarning, match=r"unknown key\(s\) region for type"):
        client.resolve("box/m")
