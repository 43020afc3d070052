"""modelplug_price: hand-computed costs from genai-prices' published rates.

Rates used (USD per million tokens, genai-prices 0.2.3 data):
claude-sonnet-4-5: input 3, cache read 0.30, cache write 3.75, output 15 (below 200k input);
claude-opus-5-5: input 4, output 20; claude-opus-5: input 5, output 25;
claude-2: input 8, output 24 (no web-search price in the table);
gpt-4o: input 2.50, cached input 1.25, output 10; o4-mini: input 1.10, output 4.40;
OpenRouter anthropic/claude-sonnet-4.5: as Anthropic's.

claude-sonnet-4-5 (end of life) stays here on purpose: these are its table rates, with
its 200k-input tier and a dated id (claude-sonnet-4-5-20250929), and a retired model is
still priced for the usage recorded while it ran.
"""

from __future__ import annotations

from decimal import Decimal

import modelplug_prices
import pytest
from modelplug.client.client import Client
from modelplug.contract.types import Usage

D = Decimal


@pytest.fixture
def client(make_client, stand_in) -> Client:
    return make_client(modelplug_prices, stand_in())


def price(client: Client, spec: str, usage: Usage, factor: float = 1.0):
    return client.price(client.resolve(spec), usage, factor)


def genai_version() -> str:
    import genai_prices

    return genai_prices.__version__


def test_modelplug_price_claude_counts_cache_reads_and_writes_once(client):
    # 1,000 total input: 700 uncached + 200 cache read + 100 cache write; 500 output.
    # 700*3 + 200*0.30 + 100*3.75 + 500*15 = 10,035 per million = $0.010035
    cost = price(
        client,
        "anthropic/claude-sonnet-4-5",
        Usage(input=700, cache_read=200, cache_write=100, output=500),
    )
    assert cost is not None
    assert cost.amount == D("0.010035")
    assert str(cost.amount) == "0.010035"
    assert cost.currency == "USD"
    assert cost.breakdown == {
        "input": D("0.0021"),
        "cache_read": D("0.00006"),
        "cache_write": D("0.000375"),
        "output": D("0.0075"),
    }
    assert sum(cost.breakdown.values()) == cost.amount
    assert cost.source == f"genai-prices {genai_version()} (data {genai_version()}, bundled)"


def test_modelplug_price_breakdown_adds_up_to_genai_prices_own_total(client):
    import genai_prices

    usage = Usage(input=12_345, cache_read=6_789, cache_write=1_011, output=4_321)
    cost = price(client, "anthropic/claude-sonnet-4-5", usage)
    theirs = genai_prices.calc_price(
        genai_prices.Usage(
            input_tokens=usage.total_input,
            cache_read_tokens=usage.cache_read,
            cache_write_tokens=usage.cache_write,
            output_tokens=usage.output,
        ),
        "claude-sonnet-4-5",
        provider_id="anthropic",
    )
    assert cost is not None
    assert cost.amount == theirs.total_price
    assert cost.breakdown["output"] == theirs.output_price


def test_modelplug_price_batch_halves_every_token_kind(client):
    usage = Usage(input=700, cache_read=200, cache_write=100, output=500)
    cost = price(client, "anthropic-batch/claude-sonnet-4-5", usage, 0.5)
    assert cost is not None
    assert cost.amount == D("0.0050175")
    assert cost.breakdown == {
        "input": D("0.00105"),
        "cache_read": D("0.00003"),
        "cache_write": D("0.0001875"),
        "output": D("0.00375"),
    }


def test_modelplug_price_web_searches_cost_a_cent_each_at_full_price_in_batch(client):
    usage = Usage(input=700, cache_read=200, cache_write=100, output=500, web_searches=3)
    cost = price(client, "anthropic-batch/claude-sonnet-4-5", usage, 0.5)
    assert cost is not None
    assert cost.breakdown["web_search"] == D("0.03")
    assert cost.amount == D("0.0050175") + D("0.03")


def test_modelplug_price_claude_web_search_without_a_table_price_uses_one_cent(client):
    # claude-2's entry has no web-search price: 1000*8 + 100*24 = $0.0104, + 2 * $0.01
    cost = price(client, "anthropic/claude-2", Usage(input=1000, output=100, web_searches=2))
    assert cost is not None
    assert cost.breakdown["web_search"] == D("0.02")
    assert cost.amount == D("0.0304")


def test_modelplug_price_openai_cached_prompt_tokens(client):
    # Chat Completions: prompt_tokens 1,000 of which 400 cached -> input 600, cache_read 400.
    # 600*2.50 + 400*1.25 + 100*10 = 3,000 per million = $0.0030
    usage = Usage(input=1000 - 400, cache_read=400, output=100)
    cost = price(client, "openai/gpt-4o", usage)
    assert cost is not None
    assert cost.amount == D("0.0030")
    assert cost.breakdown["input"] == D("0.0015")
    assert cost.breakdown["cache_read"] == D("0.0005")
    assert cost.breakdown["output"] == D("0.001")


def test_modelplug_price_openai_reasoning_tokens_are_priced_as_output_once(client):
    # output 2,000 includes 1,500 reasoning: 1000*1.10 + 2000*4.40 = $0.0099
    with_reasoning = price(client, "openai/o4-mini", Usage(input=1000, output=2000, reasoning=1500))
    without = price(client, "openai/o4-mini", Usage(input=1000, output=2000))
    assert with_reasoning is not None and without is not None
    assert with_reasoning.amount == D("0.0099")
    assert with_reasoning.amount == without.amount


def test_modelplug_price_openrouter_vendor_prefixed_id(client):
    # 800*3 + 200*0.30 + 100*15 = 3,960 per million
    usage = Usage(input=800, cache_read=200, output=100)
    cost = price(client, "openrouter/anthropic/claude-sonnet-4.5", usage)
    assert cost is not None
    assert cost.amount == D("0.00396")


@pytest.mark.parametrize(
    ("dated", "plain"),
    [
        ("anthropic/claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4-5"),
        ("openai/gpt-4o-2024-08-06", "openai/gpt-4o"),
        ("openai/openai/gpt-4o", "openai/gpt-4o"),
    ],
)
def test_modelplug_price_dated_and_prefixed_ids_resolve_to_the_model(client, dated, plain):
    usage = Usage(input=1000, output=100)
    dated_cost = price(client, dated, usage)
    plain_cost = price(client, plain, usage)
    assert dated_cost is not None and plain_cost is not None
    assert dated_cost.amount == plain_cost.amount > 0


def test_modelplug_price_claude_opus_5_5_is_not_priced_as_claude_opus_5(client):
    # opus 5.5: 1000*4 + 100*20 = $0.006; opus 5 would be 1000*5 + 100*25 = $0.0075
    usage = Usage(input=1000, output=100)
    assert price(client, "anthropic/claude-opus-5-5", usage).amount == D("0.006")
    assert price(client, "anthropic/claude-opus-5", usage).amount == D("0.0075")


@pytest.mark.parametrize(
    "spec", ["openai/gpt-no-such-model", "anthropic/claude-nonexistent-9", "acme-cloud/gpt-4o"]
)
def test_modelplug_price_unknown_model_is_none_never_zero(client, spec):
    assert price(client, spec, Usage(input=1000, output=100)) is None


def test_modelplug_price_unknown_model_leaves_response_cost_unknown(make_client, stand_in):
    client = make_client(modelplug_prices, stand_in(Usage(input=10, output=5)))
    response = client.complete("openai/gpt-no-such-model", "hi")
    assert response.cost is None


@pytest.mark.parametrize("provider", ["ollama", "lmstudio", "llamacpp", "vllm"])
def test_modelplug_price_local_model_costs_zero(client, provider):
    cost = price(client, f"{provider}/qwen3:8b", Usage(input=5000, output=900, cache_read=10))
    assert cost is not None
    assert cost.amount == 0
    assert cost.source == "local (free)"  # core's rule, before any table is asked


def test_modelplug_price_user_override_wins_over_the_table(make_client, stand_in):
    config = {"models": {"anthropic/claude-sonnet-4-5": {"price": {"input": 1, "output": 2}}}}
    client = make_client(modelplug_prices, stand_in(), config=config)
    # 700*1 + 200*1 + 100*1 (cache prices fall back to input) + 500*2 = $0.002
    cost = price(
        client,
        "anthropic/claude-sonnet-4-5",
        Usage(input=700, cache_read=200, cache_write=100, output=500),
    )
    assert cost is not None
    assert cost.source == "settings"
    assert cost.amount == D("0.002")


def test_modelplug_price_user_override_wins_over_local_zero(make_client, stand_in):
    config = {"models": {"ollama/qwen3": {"price": {"input": "0.5", "output": "1"}}}}
    client = make_client(modelplug_prices, stand_in(), config=config)
    cost = price(client, "ollama/qwen3", Usage(input=1_000_000, output=1_000_000))
    assert cost is not None
    assert cost.source == "settings"
    assert cost.amount == D("1.5")


def test_modelplug_price_is_attached_to_the_response(make_client, stand_in):
    usage = Usage(input=700, cache_read=200, cache_write=100, output=500)
    client = make_client(modelplug_prices, stand_in(usage, price_factor=0.5))
    response = client.complete("anthropic-batch/claude-sonnet-4-5", "hi")
    assert response.cost is not None
    assert response.cost.amount == D("0.0050175")
    assert response.cost.source.startswith("genai-prices ")


def test_modelplug_price_long_prompt_uses_the_table_tier(client):
    # Over 200k total input every token takes the tier rate: input 6, output 22.50.
    cost = price(
        client, "anthropic/claude-sonnet-4-5", Usage(input=190_000, cache_read=20_000, output=1000)
    )
    assert cost is not None
    # 190000*6 + 20000*0.60 + 1000*22.5 = 1,174,500 per million
    assert cost.amount == D("1.1745")


def test_modelplug_price_source_names_live_data_when_it_is_in_use(client):
    from datetime import UTC, datetime

    from genai_prices import data_snapshot

    bundled = data_snapshot.get_snapshot()
    live = data_snapshot.DataSnapshot(
        providers=bundled.providers,
        from_auto_update=True,
        timestamp=datetime(2026, 11, 30, 0, 12, tzinfo=UTC),
    )
    data_snapshot.set_custom_snapshot(live)
    try:
        cost = price(client, "openai/gpt-4o", Usage(input=1000))
    finally:
        data_snapshot.set_custom_snapshot(None)
    assert cost is not None
    assert (
        cost.source == f"genai-prices {genai_version()} (data live, fetched 2026-11-30 00:12 UTC)"
    )


def test_modelplug_price_a_user_named_provider_is_priced_as_its_type(client: Client) -> None:
    from modelplug.contract.types import Endpoint, Route
    from modelplug.host.settings import load_settings

    settings = load_settings(user_path="/nonexistent/none.toml", use_project=False)
    work = Route(provider="work", model="claude-sonnet-4-5", endpoint=Endpoint(type="anthropic"))
    usage = Usage(input=700, cache_read=200, cache_write=100, output=500)
    cost = modelplug_prices.modelplug_price(work, usage, 1.0, settings)
    assert cost is not None and cost.amount == Decimal("0.010035")
