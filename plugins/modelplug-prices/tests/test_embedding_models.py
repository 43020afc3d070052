"""Embedding models in the model index (their vector size, the input limit of one text,
whether the server cuts a longer one) and priced per input token from genai-prices."""

from __future__ import annotations

from decimal import Decimal

import modelplug_prices
import pytest
from modelplug.client.client import Client
from modelplug.contract.types import Usage


@pytest.fixture
def client(make_client, stand_in) -> Client:
    return make_client(modelplug_prices, stand_in())


def test_modelplug_model_info_carries_an_embedding_models_dimensions_and_limit(client):
    info = client.resolve("openai/text-embedding-3-large").info
    assert info.embedding_dimensions == 3072
    assert info.context_window == 8192  # genai-prices' window, the input limit per text
    assert info.embedding_truncates is False  # OpenAI refuses a longer text


def test_modelplug_model_info_uses_the_own_limit_where_genai_prices_has_none(client):
    info = client.resolve("openrouter/google/gemini-embedding-001").info
    assert (info.embedding_dimensions, info.context_window) == (3072, 2048)
    assert info.embedding_truncates is True


def test_modelplug_model_info_knows_a_local_embedding_model_by_its_tag(client):
    info = client.resolve("ollama/nomic-embed-text:latest").info
    assert info.embedding_dimensions == 768
    assert info.context_window == 8192


def test_modelplug_model_info_gives_a_chat_model_no_embedding_dimensions(client):
    info = client.resolve("openai/gpt-4o").info
    assert info.embedding_dimensions is None and info.embedding_truncates is None


def test_modelplug_price_prices_embedding_input_tokens(client):
    route = client.resolve("openai/text-embedding-3-small")
    cost = client.price(route, Usage(input=1_000_000))
    assert cost is not None
    assert (cost.amount, cost.currency) == (Decimal("0.02"), "USD")  # $0.02 per million
    assert cost.breakdown["input"] == Decimal("0.02") and cost.breakdown["output"] == 0
