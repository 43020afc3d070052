"""Bedrock model ids are priced and given their context windows by modelplug-prices
(genai-prices carries Bedrock); skipped from this plugin's sdist alone."""

from __future__ import annotations

from decimal import Decimal

import pytest
from modelplug.contract.types import Usage

prices = pytest.importorskip("modelplug_prices")


def test_an_inference_profile_and_a_model_id_have_a_window_and_a_price(make_client):
    import modelplug_bedrock

    client = make_client(modelplug_bedrock, prices, environ={})
    usage = Usage(input=1_000_000, output=1_000_000)
    route = client.resolve("bedrock/meta.llama3-3-70b-instruct-v1:0")
    assert route.info.context_window == 128_000
    cost = prices.modelplug_price(
        route=route, usage=usage, price_factor=1.0, settings=client.settings
    )
    assert cost is not None and cost.amount == Decimal("1.44")
    profile = client.resolve("bedrock/us.anthropic.claude-sonnet-4-6-v1:0")
    assert profile.info.context_window == 1_000_000
    priced = prices.modelplug_price(
        route=profile, usage=usage, price_factor=1.0, settings=client.settings
    )
    assert priced is not None and priced.amount > 0
