"""A provider type's side of the user's [providers.NAME] tables: the names it declares,
the Endpoint of a user's provider, and the keys its type takes beyond core's."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from modelplug import (
    ConfigError,
    ModelplugWarning,
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
            builtin=name == "acme",
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


def test_a_builtin_name_without_a_table_gets_the_types_defaults(make_client):
    route = make_client(Acme()).resolve("acme/m1")
    assert route.endpoint.base_url == "https://api.acme.example/v1"
    assert route.endpoint.api_key_env == "ACME_API_KEY"
    assert route.endpoint.headers == {} and not route.endpoint.local
    assert route.info.price is None  # not local: whatever a pricing plugin says


def test_a_loopback_server_whose_table_names_no_key_needs_none_and_is_free(make_client):
    table = {"type": TYPE, "base_url": "http://127.0.0.1:8080/v1"}
    route = make_client(Acme(), config=providers(box=table)).resolve("box/m1")
    assert route.endpoint.api_key_env is None  # ACME_API_KEY does not apply
    assert route.endpoint.local
    assert route.info.price is not None and route.info.price_source == "local (free)"
    assert (route.info.price.input, route.info.price.output) == (0, 0)


def test_a_loopback_server_with_a_key_named_is_not_local(make_client):
    # A keyed server on this machine is likely a proxy to a paid API.
    table = {"type": TYPE, "base_url": "http://127.0.0.1:4000/v1", "api_key_env": "PROXY_KEY"}
    route = make_client(Acme(), config=providers(proxy=table)).resolve("proxy/m1")
    assert route.endpoint.api_key_env == "PROXY_KEY"
    assert not route.endpoint.local and route.info.price is None


def test_api_key_env_empty_in_the_users_file_means_no_key(make_client, modelplug_config_dir):
    (modelplug_config_dir / "config.toml").write_text(
        f'[providers.gate]\ntype = "{TYPE}"\nbase_url = "https://gate.example/v1"\n'
        'api_key_env = ""\n'
    )
    route = make_client(Acme()).resolve("gate/m1")
    assert route.endpoint.api_key_env is None
    assert not route.endpoint.local  # no key, but not on this machine: not free


def test_local_in_the_table_marks_a_server_elsewhere_local_and_a_loopback_one_not(make_client):
    lan = {
        "type": TYPE,
        "base_url": "http://gpu-box.lan:8080/v1",
        "allow_insecure_http": True,
        "local": True,
    }
    proxy = {"type": TYPE, "base_url": "http://127.0.0.1:4000/v1", "local": False}
    client = make_client(Acme(), config=providers(lan=lan, proxy=proxy))
    on_lan = client.resolve("lan/m1")
    assert on_lan.endpoint.local and on_lan.endpoint.api_key_env is None
    assert on_lan.info.price_source == "local (free)"
    behind_proxy = client.resolve("proxy/m1")
    assert not behind_proxy.endpoint.local
    assert behind_proxy.endpoint.api_key_env == "ACME_API_KEY"  # the type's default again


def test_the_users_price_wins_over_a_local_servers_zero(make_client):
    config = {
        **providers(box={"type": TYPE, "base_url": "http://127.0.0.1:8080/v1"}),
        "models": {"box/m1": {"price": {"input": 1, "output": 2}}},
    }
    info = make_client(Acme(), config=config).resolve("box/m1").info
    assert info.price is not None and (info.price.input, info.price.output) == (1, 2)
    assert info.price_source == "settings"


def test_a_type_whose_servers_bill_is_never_local_by_its_address(make_client):
    client = make_client(config=providers(box={"type": TYPE, "base_url": "http://127.0.0.1:9"}))
    endpoint = user_endpoint(client.settings, "box", TYPE, api_key_env="ACME_KEY", local=False)
    assert endpoint is not None
    assert (endpoint.local, endpoint.api_key_env) == (False, "ACME_KEY")


def test_without_needs_base_url_a_table_without_one_leaves_it_to_the_plugin(make_client):
    client = make_client(config=providers(work={"type": TYPE, "headers": {"X-Team": "a"}}))
    endpoint = user_endpoint(client.settings, "work", TYPE, needs_base_url=False)
    assert endpoint is not None
    assert endpoint.base_url is None and endpoint.headers == {"X-Team": "***"}
    assert user_endpoint(client.settings, "work", "other-type", needs_base_url=False) is None


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
