"""Hosted services by name: ``mistral/...`` and the others resolve with only their key
variable set; a user's own ``[providers.NAME]`` still overrides the preset."""

from __future__ import annotations

import pytest
from modelplug import ConfigError, MissingKeyError
from modelplug.contract.types import Message, Request
from modelplug.host.known_providers import KNOWN_PROVIDERS, example_spec
from modelplug_openai_compat.providers import HOSTED_SERVICES, PRESETS

HI = Message(role="user", content="hi")
DONE = [{"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]}]

# What each service's own docs and SDK give: base URL and key variable.
SERVICES = {
    "mistral": ("https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    "groq": ("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "xai": ("https://api.x.ai/v1", "XAI_API_KEY"),
    "deepseek": ("https://api.deepseek.com", "DEEPSEEK_API_KEY"),
    "together": ("https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "fireworks": ("https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY"),
    "cerebras": ("https://api.cerebras.ai/v1", "CEREBRAS_API_KEY"),
    "deepinfra": ("https://api.deepinfra.com/v1/openai", "DEEPINFRA_API_KEY"),
    "perplexity": ("https://api.perplexity.ai", "PERPLEXITY_API_KEY"),
}


def test_every_hosted_service_is_a_preset() -> None:
    assert set(HOSTED_SERVICES) == set(SERVICES)
    assert set(HOSTED_SERVICES) <= set(PRESETS)


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_a_hosted_service_resolves_by_name_with_its_url_key_and_server(make_client, name):
    client = make_client(
        "modelplug-openai-compat", entry_points=True, environ={SERVICES[name][1]: "sk-test"}
    )
    route = client.resolve(example_spec(name))
    assert (route.endpoint.base_url, route.endpoint.api_key_env) == SERVICES[name]
    assert route.endpoint.server == name
    assert route.endpoint.type == "openai-compatible"
    assert route.endpoint.local is False  # a paid API: never priced as free
    assert route.model == KNOWN_PROVIDERS[name].example


def test_a_missing_key_names_the_variable_to_set(make_client):
    client = make_client("modelplug-openai-compat", entry_points=True, environ={})
    with pytest.raises(MissingKeyError, match="Set MISTRAL_API_KEY to use the provider mistral"):
        client.complete("mistral/mistral-large-latest", "hi")


def test_the_key_goes_as_a_bearer_token(compat, wire_server):
    wire_server.add_sse(DONE, done=True)
    client = compat(
        name="groq", api_key_env="GROQ_API_KEY", environ={"GROQ_API_KEY": "gsk-test-123"}
    )
    assert client.complete("groq/llama-3.3-70b-versatile", "hi").text == "ok"
    assert wire_server.requests[-1].headers["authorization"] == "Bearer gsk-test-123"


def test_a_users_table_overrides_the_preset_url_and_keeps_its_rules(compat, wire_server):
    # [providers.mistral] with a base_url of its own (a proxy): the call goes there,
    # the route is still Mistral's server, and Mistral's field names are used.
    wire_server.add_sse(DONE, done=True)
    client = compat(name="mistral")
    client.complete("mistral/mistral-small-latest", Request(messages=[HI], seed=7))
    body = wire_server.requests[-1].json()
    assert wire_server.requests[-1].path == "/v1/chat/completions"
    assert body["random_seed"] == 7 and "seed" not in body


def test_server_gives_a_users_own_provider_a_services_rules(compat, wire_server):
    wire_server.add_sse(DONE, done=True)
    client = compat(name="eu-gateway", server="mistral")
    client.complete("eu-gateway/mistral-small-latest", Request(messages=[HI], seed=7))
    assert wire_server.requests[-1].json()["random_seed"] == 7


def test_a_server_name_nobody_knows_is_refused_naming_the_services(compat):
    with pytest.raises(ConfigError, match="perplexity"):
        compat(name="lab", server="mistrall").resolve("lab/m")
