"""Prices and context windows of Gemini models come from modelplug-prices (genai-prices
lists them under its provider ``google``; the prices plugin maps ``gemini`` and
``vertex`` to it)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest
from modelplug.client.client import Client
from modelplug_kit.testing import WireServer

modelplug_prices = pytest.importorskip("modelplug_prices")


def test_a_gemini_response_is_priced_and_its_window_known(
    gemini_client: Callable[..., Client], wire_server: WireServer, recorded: Callable[[str], Path]
) -> None:
    client = gemini_client("", modelplug_prices)
    route = client.resolve("gemini/gemini-2.5-flash")
    assert (route.info.context_window, route.info.max_output_tokens) == (1_048_576, 65_536)
    wire_server.add_file(recorded("tool_answer.sse"))
    response = client.complete("gemini/gemini-2.5-flash", "5 times 3?")
    # 121 input at $0.30/M + 9 output at $2.50/M (genai-prices' gemini-2.5-flash rates)
    assert response.cost is not None
    assert (
        response.cost.amount
        == Decimal(121) * Decimal("0.3") / 10**6 + Decimal(9) * Decimal("2.5") / 10**6
    )


def test_vertex_models_are_priced_as_google_models(gemini_client: Callable[..., Client]) -> None:
    from modelplug.contract.types import Usage

    client = gemini_client("", modelplug_prices)
    cost = client.price(client.resolve("vertex/gemini-2.5-flash"), Usage(input=1_000_000, output=0))
    assert cost is not None and cost.amount == Decimal("0.3")


def test_gemini_windows_come_from_the_prices_plugin(gemini_client: Callable[..., Client]) -> None:
    client = gemini_client("", modelplug_prices)
    # genai-prices' model data lacks gemini-3-pro-preview: the prices plugin's own table.
    pro = client.resolve("gemini/gemini-3-pro-preview")
    assert (pro.info.context_window, pro.info.max_output_tokens) == (1_048_576, 65_536)
    # genai-prices' own figures for the others.
    for spec in ("vertex/gemini-3-flash-preview", "gemini-2.5-flash-lite"):
        info = client.resolve(spec).info
        assert info.context_window is not None and info.context_window >= 1_000_000
