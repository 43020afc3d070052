"""One rule for a server on this machine, whatever the provider type: a provider of the
user's own on a loopback base URL that names no key variable is sent no key (the type's
default variable does not apply) and costs nothing unless the user prices its models;
one elsewhere without its key still fails asking for it. Each type through its real
plugin, streaming from the loopback WireServer."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from modelplug import MissingKeyError
from modelplug_kit.testing import WireServer

RECORDINGS = Path(__file__).parent / "recordings"
PLANTED = "sk-planted-0123456789abcdef"  # in the type's key variable: it must not be sent


@dataclass(frozen=True)
class Kind:
    plugin: str
    type: str
    path: str  # what base_url adds to the server's address
    recording: str
    text: str
    key_env: str  # the type's default key variable
    remote: dict[str, Any]  # a provider elsewhere that names no key


KINDS = {
    "anthropic": Kind(
        "modelplug-anthropic",
        "anthropic",
        "",
        "local_anthropic_text.sse",
        "Hello, world!",
        "ANTHROPIC_API_KEY",
        {"far": {"type": "anthropic", "base_url": "https://llm.example.invalid"}},
    ),
    "openai-responses": Kind(
        "modelplug-openai",
        "openai-responses",
        "/v1",
        "local_responses_text.sse",
        "The final result is **570**.",
        "OPENAI_API_KEY",
        {"far": {"type": "openai-responses", "base_url": "https://llm.example.invalid/v1"}},
    ),
    "openai-compatible": Kind(
        "modelplug-openai-compat",
        "openai-compatible",
        "/v1",
        "chat_text.sse",
        "Still here.",
        "OPENROUTER_API_KEY",
        {"openrouter": {"type": "openai-compatible"}},  # the preset, at openrouter.ai
    ),
}


def installed(kind: Kind) -> Kind:
    if importlib.util.find_spec(kind.plugin.replace("-", "_")) is None:
        pytest.skip(f"{kind.plugin} is not installed")
    return kind


@pytest.fixture(params=sorted(KINDS))
def kind(request: pytest.FixtureRequest) -> Kind:
    return installed(KINDS[request.param])


def user_file(config_dir: Path, text: str) -> None:
    (config_dir / "config.toml").write_text(text)


def local_client(
    make_client: Any, kind: Kind, server: WireServer, config_dir: Path, extra: str = ""
) -> Any:
    user_file(
        config_dir,
        f'[providers.llama]\ntype = "{kind.type}"\nbase_url = "{server.url}{kind.path}"\n' + extra,
    )
    return make_client(kind.plugin, environ={kind.key_env: PLANTED})


def sent_credentials(server: WireServer) -> list[str]:
    headers = server.requests[0].headers
    return [v for k, v in headers.items() if k.lower() in ("authorization", "x-api-key", "api-key")]


def test_a_keyless_loopback_provider_is_sent_no_key_and_costs_nothing(
    make_client, wire_server, modelplug_config_dir, kind
):
    wire_server.add_file(RECORDINGS / kind.recording)
    client = local_client(make_client, kind, wire_server, modelplug_config_dir)
    response = client.complete("llama/qwen3", "hi")
    assert response.text == kind.text and response.usage.reported
    assert sent_credentials(wire_server) == []  # the type's key variable does not apply
    assert response.cost is not None
    assert (response.cost.amount, response.cost.source) == (Decimal(0), "local (free)")


def test_the_users_price_wins_over_a_local_servers_zero(
    make_client, wire_server, modelplug_config_dir, kind
):
    wire_server.add_file(RECORDINGS / kind.recording)
    price = '[models."llama/qwen3"]\nprice = { input = 1, output = 2 }\n'
    client = local_client(make_client, kind, wire_server, modelplug_config_dir, price)
    response = client.complete("llama/qwen3", "hi")
    usage = response.usage
    inputs = usage.input + usage.cache_read + usage.cache_write  # cache prices: the input's
    expected = (Decimal(inputs) * 1 + Decimal(usage.output) * 2) / 1_000_000
    assert response.cost is not None and response.cost.source == "settings"
    assert expected > 0 and response.cost.amount == expected


def test_api_key_env_empty_means_no_key_and_local_false_means_not_free(
    make_client, wire_server, modelplug_config_dir, kind
):
    # A loopback proxy to a paid API that takes no key: not free, so priced as its
    # model (no pricing plugin here: unknown, never zero).
    wire_server.add_file(RECORDINGS / kind.recording)
    extra = 'api_key_env = ""\nlocal = false\n'
    client = local_client(make_client, kind, wire_server, modelplug_config_dir, extra)
    response = client.complete("llama/qwen3", "hi")
    assert sent_credentials(wire_server) == []
    assert response.cost is None


def test_a_provider_elsewhere_without_its_key_still_asks_for_it(
    make_client, wire_server, modelplug_config_dir, kind
):
    ((name, table),) = kind.remote.items()
    lines = "".join(f'{k} = "{v}"\n' for k, v in table.items())
    user_file(modelplug_config_dir, f"[providers.{name}]\n{lines}")
    client = make_client(kind.plugin, environ={})
    with pytest.raises(MissingKeyError, match=rf"Set {kind.key_env} to use the provider {name}\."):
        client.complete(f"{name}/qwen3", "hi")
    assert wire_server.requests == []
