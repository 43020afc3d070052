"""Property tests for modelplug_price: more tokens never cost less, and every input
token (uncached, cache read, cache write) is priced exactly once.

claude-sonnet-4-5 (end of life) stays among the models on purpose: its table rates have a
200k-input tier, and a retired model is still priced for the usage recorded while it ran.
"""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st
from modelplug.contract.types import Usage
from modelplug.testing import examples
from modelplug_prices.pricing import TOKEN_KINDS, price_usage

MODELS = [
    ("anthropic", "claude-sonnet-4-5"),
    ("anthropic", "claude-opus-5-5"),
    ("openai", "gpt-4o"),
    ("openai", "o4-mini"),
    ("openrouter", "anthropic/claude-sonnet-4.5"),
    ("openrouter", "qwen/qwen3-coder"),
]
FIELDS = ["input", "cache_read", "cache_write", "output", "web_searches"]
MILLION = Decimal(1_000_000)

# Counts up to 250k so the over-200k input tier is crossed too.
counts = st.integers(min_value=0, max_value=250_000)
usages = st.builds(
    Usage,
    input=counts,
    cache_read=counts,
    cache_write=counts,
    output=counts,
    reasoning=st.integers(min_value=0, max_value=1000),
    web_searches=st.integers(min_value=0, max_value=20),
)


def amount(provider: str, model: str, usage: Usage, factor: float = 1.0) -> Decimal:
    cost = price_usage(provider, model, usage, factor)
    assert cost is not None
    return cost.amount


@settings(max_examples=examples(150), deadline=None)
@given(
    usage=usages,
    model=st.sampled_from(MODELS),
    field=st.sampled_from(FIELDS),
    extra=st.integers(min_value=1, max_value=100_000),
    factor=st.sampled_from([1.0, 0.5]),
)
def test_modelplug_price_is_monotone_in_every_token_count(usage, model, field, extra, factor):
    more = usage.model_copy(update={field: getattr(usage, field) + extra})
    assert amount(*model, more, factor) >= amount(*model, usage, factor)


@settings(max_examples=examples(150), deadline=None)
@given(
    uncached=st.integers(min_value=0, max_value=60_000),
    read=st.integers(min_value=0, max_value=60_000),
    write=st.integers(min_value=0, max_value=60_000),
    output=st.integers(min_value=0, max_value=60_000),
)
def test_modelplug_price_counts_cache_tokens_once(uncached, read, write, output):
    # Below the 200k tier, claude-sonnet-4-5 rates are 3 / 0.30 / 3.75 / 15.
    usage = Usage(input=uncached, cache_read=read, cache_write=write, output=output)
    expected = (
        uncached * Decimal(3) + read * Decimal("0.3") + write * Decimal("3.75") + output * 15
    ) / MILLION
    cost = price_usage("anthropic", "claude-sonnet-4-5", usage, 1.0)
    assert cost is not None
    assert cost.amount == expected
    assert cost.breakdown["input"] == uncached * Decimal(3) / MILLION
    assert cost.breakdown["cache_read"] == read * Decimal("0.3") / MILLION


@settings(max_examples=examples(100), deadline=None)
@given(
    uncached=st.integers(min_value=0, max_value=100_000),
    cached=st.integers(min_value=0, max_value=100_000),
)
def test_modelplug_price_total_input_is_priced_once_for_chat_completions(uncached, cached):
    # gpt-4o: the same prompt priced with part of it cached costs the cached part at
    # 1.25 instead of 2.50, never both.
    plain = amount("openai", "gpt-4o", Usage(input=uncached + cached))
    split = amount("openai", "gpt-4o", Usage(input=uncached, cache_read=cached))
    assert plain - split == cached * Decimal("1.25") / MILLION


@settings(max_examples=examples(100), deadline=None)
@given(usage=usages, model=st.sampled_from(MODELS))
def test_modelplug_price_batch_halves_tokens_and_keeps_per_use_charges(usage, model):
    full = price_usage(*model, usage, 1.0)
    half = price_usage(*model, usage, 0.5)
    assert full is not None and half is not None
    for kind in TOKEN_KINDS:
        assert half.breakdown[kind] * 2 == full.breakdown[kind]
    assert half.breakdown.get("web_search") == full.breakdown.get("web_search")
    assert sum(half.breakdown.values()) == half.amount
