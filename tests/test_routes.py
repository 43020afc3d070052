"""Route, Endpoint, ModelInfo and Price: plain records that are cheap to build, safe to
print and exact with money."""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal

import pytest
from modelplug.contract.errors import ErrorClass
from modelplug.contract.routes import Endpoint, ModelInfo, Price, Route


def test_a_price_holds_exact_decimals_whatever_it_was_given() -> None:
    price = Price(input=0.1, output="15", cache_read=3)  # type: ignore[arg-type]
    assert (price.input, price.output, price.cache_read) == (
        Decimal("0.1"),
        Decimal(15),
        Decimal(3),
    )
    assert price.web_search is None


def test_a_price_refuses_what_is_not_a_number() -> None:
    with pytest.raises(ValueError, match=r"Price\.output: expected a number"):
        Price(input=1, output=True)  # type: ignore[arg-type]
    # Not even as a Decimal: a NaN price would fail every call's cost after the answer.
    with pytest.raises(ValueError, match=r"Price\.input: expected a finite number"):
        Price(input=Decimal("NaN"), output=1)  # type: ignore[arg-type]


def test_known_fields_win_and_unknown_ones_are_filled() -> None:
    catalog = ModelInfo(context_window=200_000, max_output_tokens=64_000, notes=["catalog"])
    user = ModelInfo(context_window=100_000, notes=["user", "catalog"])
    merged = user.merged_over(catalog)
    assert merged.context_window == 100_000
    assert merged.max_output_tokens == 64_000
    assert merged.notes == ["catalog", "user"]
    assert catalog.context_window == 200_000  # neither side is changed


def test_header_values_never_show() -> None:
    endpoint = Endpoint(type="openai-compatible", headers={"X-Team-Token": "team-token-42"})
    route = Route(provider="lab", model="m", endpoint=endpoint)
    assert "team-token-42" not in repr(endpoint)
    assert "team-token-42" not in repr(route)
    assert "team-token-42" not in json.dumps(route.public_dict())
    assert route.public_dict()["endpoint"]["headers"] == {"X-Team-Token": "***"}


def test_public_dict_is_json_ready() -> None:
    route = Route(
        provider="ollama",
        model="qwen3",
        endpoint=Endpoint(type="openai-compatible", local=True),
        info=ModelInfo(price=Price(input=0, output="0.5")),  # type: ignore[arg-type]
    )
    data = json.loads(json.dumps(route.public_dict()))
    assert data["name"] == "ollama/qwen3"
    assert data["info"]["price"]["output"] == "0.5"
    assert route.info.public_dict()["price"]["input"] == "0"


def test_records_take_keywords_only() -> None:
    with pytest.raises(TypeError):
        Route("p", "m", Endpoint(type="t"))  # type: ignore[misc]


def test_an_error_class_checks_its_kind_and_wait() -> None:
    with pytest.raises(ValueError, match="unknown error kind 'rate-limit'; known: transient"):
        ErrorClass(kind="rate-limit")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="retry_after must be >= 0"):
        ErrorClass(kind="rate_limit", retry_after=-1)
    error_class = ErrorClass(kind="rate_limit", retryable=True, fallback=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        error_class.reason = "x"  # type: ignore[misc]
    # A variant made with dataclasses.replace is checked again.
    with pytest.raises(ValueError, match="never falls back"):
        dataclasses.replace(error_class, kind="bad_request")


def test_a_free_price_is_zero_for_every_kind_of_token() -> None:
    from decimal import Decimal

    from modelplug.contract.routes import Price

    free = Price.free()
    assert (free.input, free.output, free.cache_read, free.cache_write) == (Decimal(0),) * 4
    assert free.web_search is None
