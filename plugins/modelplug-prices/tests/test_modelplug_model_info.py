"""modelplug_model_info: windows from genai-prices' model data, max output from the
plugin's own table, longest same-model prefix, and notes when unknown.

claude-sonnet-4-5 (end of life) stays here on purpose: it has both a window in
genai-prices' data and a dated id (claude-sonnet-4-5-20250929), which its successor
claude-sonnet-4-6 has not.
"""

from __future__ import annotations

import modelplug_prices
import pytest
from modelplug.client.client import Client
from modelplug.contract.errors import ConfigError
from modelplug_prices import live
from modelplug_prices.windows import LOCAL_DEFAULT_WINDOW, Window, lookup, normalize


@pytest.fixture
def client(make_client, stand_in) -> Client:
    return make_client(modelplug_prices, stand_in())


def test_modelplug_model_info_hosted_model_from_both_tables(client):
    info = client.resolve("anthropic/claude-sonnet-4-5").info
    assert info.context_window == 200_000  # genai-prices
    assert info.max_output_tokens == 64_000  # own table
    assert info.notes == []


def test_modelplug_model_info_dated_id_and_openrouter_prefix(client):
    dated = client.resolve("anthropic/claude-sonnet-4-5-20250929").info
    assert (dated.context_window, dated.max_output_tokens) == (200_000, 64_000)
    routed = client.resolve("openrouter/openai/gpt-4o").info
    assert (routed.context_window, routed.max_output_tokens) == (128_000, 16_384)


def test_modelplug_model_info_claude_opus_5_5_does_not_fall_back_to_claude_opus_5():
    table = {"claude-opus-5": Window(1, 10), "claude-opus-5-5": Window(2, 20)}
    assert lookup("claude-opus-5-5", table) == ("claude-opus-5-5", Window(2, 20))
    assert lookup("claude-opus-5-5-20270101", table) == ("claude-opus-5-5", Window(2, 20))
    assert lookup("claude-opus-5-20260101", table) == ("claude-opus-5", Window(1, 10))
    # With only the shorter entry, 5.5 is a different model: no answer rather than 5's.
    assert lookup("claude-opus-5-5", {"claude-opus-5": Window(1, 10)}) is None
    assert lookup("claude-opus-5.5", {"claude-opus-5": Window(1, 10)}) is None


@pytest.mark.parametrize(
    ("model", "key"),
    [
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("qwen2.5-coder:7b", "qwen2-5-coder"),
        ("qwen/qwen3-coder", "qwen3-coder"),
        ("qwen3-8b", "qwen3"),
        ("o4-mini", "o4-mini"),
    ],
)
def test_modelplug_model_info_longest_same_model_prefix(model, key):
    found = lookup(model)
    assert found is not None
    assert found[0] == key


@pytest.mark.parametrize("model", ["gpt-4o-audio-preview", "o3-pro", "claude-opus-4-9", "gpt-5-5"])
def test_modelplug_model_info_other_models_do_not_borrow_a_shorter_entry(model):
    assert lookup(model) is None


def test_modelplug_model_info_normalize():
    assert normalize("OpenRouter/Anthropic/Claude-Sonnet-4.5") == "claude-sonnet-4-5"


def test_modelplug_model_info_unknown_hosted_model_has_no_window_and_a_note(client):
    info = client.resolve("openai/gpt-no-such-model").info
    assert info.context_window is None
    assert info.max_output_tokens is None
    assert len(info.notes) == 1
    assert 'models."openai/gpt-no-such-model".context_window' in info.notes[0]


def test_modelplug_model_info_local_model_without_an_entry_gets_32768(client):
    info = client.resolve("ollama/mystery-model:3b").info
    assert info.context_window == LOCAL_DEFAULT_WINDOW == 32_768
    assert "assuming 32,768" in info.notes[0]


def test_modelplug_model_info_local_model_with_an_entry(client):
    info = client.resolve("ollama/llama3.1:8b").info
    assert info.context_window == 131_072
    assert "native window" in info.notes[0]


def test_modelplug_model_info_user_window_wins(make_client, stand_in):
    config = {"models": {"anthropic/claude-sonnet-4-5": {"context_window": 8000}}}
    client = make_client(modelplug_prices, stand_in(), config=config)
    info = client.resolve("anthropic/claude-sonnet-4-5").info
    assert info.context_window == 8000
    assert info.max_output_tokens == 64_000


@pytest.fixture
def updater_calls(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Live updates never touch the network in tests: record the start instead."""
    calls: list[float] = []
    monkeypatch.setattr(live, "_updater", None)
    monkeypatch.setattr(live, "start_updater", lambda interval: calls.append(interval) or object())
    return calls


def test_modelplug_model_info_live_updates_off_by_default(client, updater_calls):
    client.resolve("anthropic/claude-sonnet-4-5")
    assert updater_calls == []
    assert live._updater is None


def installed_client(make_client, stand_in, config):
    """The plugin as installed (its entry point), so its [prices] section is known."""
    return make_client(
        "modelplug-prices", "stand-in-provider", stand_in(), entry_points=True, config=config
    )


def test_modelplug_model_info_live_updates_start_once_when_turned_on(
    make_client, stand_in, updater_calls
):
    config = {"prices": {"live_updates": True, "update_interval": 600}}
    client = installed_client(make_client, stand_in, config)
    assert "modelplug-prices" in {p.name for p in client.plugins() if p.enabled}
    client.resolve("anthropic/claude-sonnet-4-5")
    client.resolve("openai/gpt-4o")
    assert updater_calls == [600.0]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"live_updates": "yes"}, "live_updates must be true or false"),
        ({"live_updates": True, "update_interval": 5}, "update_interval must be"),
    ],
)
def test_modelplug_model_info_live_update_settings_are_checked(
    make_client, stand_in, updater_calls, options, message
):
    client = installed_client(make_client, stand_in, {"prices": options})
    with pytest.raises(ConfigError, match=message):
        client.resolve("anthropic/claude-sonnet-4-5")
    assert updater_calls == []


def test_modelplug_model_info_no_guess_note_when_the_user_set_the_window(make_client, stand_in):
    config = {"models": {"ollama/mystery-model": {"context_window": 8192}}}
    client = make_client(modelplug_prices, stand_in(), config=config)
    info = client.resolve("ollama/mystery-model").info
    assert info.context_window == 8192
    assert info.notes == []


def test_modelplug_model_info_no_guess_note_when_the_provider_knows_the_window(client):
    from modelplug.contract.types import Endpoint, ModelInfo, Route
    from modelplug_prices.windows import model_info

    route = Route(
        provider="ollama",
        model="mystery-model",
        endpoint=Endpoint(type="x", local=True),
        info=ModelInfo(context_window=4096),
    )
    assert model_info(route, client.settings).notes == []


def test_modelplug_model_info_project_file_cannot_turn_on_live_updates(
    make_client, stand_in, updater_calls, modelplug_config_dir
):
    from pathlib import Path

    Path("modelplug.toml").write_text("[prices]\nlive_updates = true\n")
    client = installed_client(make_client, stand_in, None)
    assert client.settings.plugin_options("prices") == {"live_updates": True}
    client.resolve("anthropic/claude-sonnet-4-5")
    assert updater_calls == []
