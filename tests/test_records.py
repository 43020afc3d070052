"""Settings sections read from TOML tables into plain records (modelplug.contract.records): every
wrong value is named by its dotted key, and nothing but TableError escapes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplug.contract.records import TableError, field_names, from_table, to_decimal
from modelplug.contract.routes import Price
from modelplug.contract.settings import ModelSettings, PluginToggles, ProviderSettings


def test_a_provider_table_becomes_a_record() -> None:
    provider = from_table(
        ProviderSettings,
        {"type": "openai-compatible", "base_url": "http://127.0.0.1:8080/v1", "headers": {}},
        "providers.lab",
    )
    assert provider == ProviderSettings(
        type="openai-compatible", base_url="http://127.0.0.1:8080/v1"
    )
    assert provider.allow_insecure_http is False


def test_a_nested_price_becomes_exact_decimals() -> None:
    model = from_table(
        ModelSettings,
        {"context_window": 32768, "price": {"input": 0.1, "output": "0.4", "cache_read": 1}},
        "models.m",
    )
    assert model.price == Price(input=Decimal("0.1"), output=Decimal("0.4"), cache_read=1)
    assert model.price is not None and str(model.price.input) == "0.1"


@pytest.mark.parametrize(
    ("record", "table", "key", "problem"),
    [
        (ProviderSettings, {}, "providers.p.type", "this key is required"),
        (ProviderSettings, {"type": 3}, "providers.p.type", "expected a string, got the number 3"),
        (
            ProviderSettings,
            {"type": "x", "headers": {"X-Team": 7}},
            "providers.p.headers.X-Team",
            "expected a string",
        ),
        (
            ProviderSettings,
            {"type": "x", "allow_insecure_http": "yes"},
            "providers.p.allow_insecure_http",
            "expected true or false, got a string",
        ),
        (ModelSettings, {"context_window": "big"}, "models.m.context_window", "an integer"),
        # TOML's true is a bool, which Python counts as the int 1: still a mistake.
        (ModelSettings, {"context_window": True}, "models.m.context_window", "got true"),
        (ModelSettings, {"context_window": 0}, "models.m.context_window", "greater than 0"),
        (ModelSettings, {"max_output_tokens": -5}, "models.m.max_output_tokens", "than 0"),
        (ModelSettings, {"price": {"input": 1}}, "models.m.price.output", "required"),
        (
            ModelSettings,
            {"price": {"input": "cheap", "output": 1}},
            "models.m.price.input",
            "expected a number, got a string that is not one",
        ),
        (
            ModelSettings,
            {"price": {"input": "nan", "output": 1}},
            "models.m.price.input",
            "finite",
        ),
        (ModelSettings, {"price": 3}, "models.m.price", "expected a table, got the number 3"),
        (
            ModelSettings,
            {"price": {"input": 1, "output": 2, "cahce_read": 1}},
            "models.m.price.cahce_read",
            "unknown key (known: input, output, cache_read, cache_write, web_search)",
        ),
        (PluginToggles, {"enable": "anthropic"}, "plugins.enable", "expected a list"),
        (PluginToggles, {"disable": ["x", 2]}, "plugins.disable[1]", "expected a string"),
    ],
)
def test_a_wrong_value_is_named_by_its_key(
    record: type, table: dict[str, Any], key: str, problem: str
) -> None:
    where = {ProviderSettings: "providers.p", ModelSettings: "models.m"}.get(record, "plugins")
    with pytest.raises(TableError) as caught:
        from_table(record, table, where)
    assert caught.value.key == key
    assert problem in str(caught.value)
    assert str(caught.value).startswith(f"key '{key}': ")


def test_a_wrong_string_is_never_quoted() -> None:
    # A header line where a table was meant: the value may hold a token.
    with pytest.raises(TableError) as caught:
        from_table(
            ProviderSettings,
            {"type": "x", "headers": "Authorization: Bearer sk-team-123"},
            "providers.p",
        )
    assert "sk-team-123" not in str(caught.value)
    assert str(caught.value) == "key 'providers.p.headers': expected a table, got a string"


def test_field_names_follow_the_declaration() -> None:
    assert field_names(PluginToggles) == ["enable", "disable", "local", "lock", "lock_mode"]


@pytest.mark.parametrize(
    ("value", "exact"),
    [(0.1, "0.1"), (3, "3"), ("2.50", "2.50"), (Decimal("1e-3"), "0.001"), (1e-7, "1E-7")],
)
def test_to_decimal_is_exact(value: Any, exact: str) -> None:
    assert to_decimal(value) == Decimal(exact)


@pytest.mark.parametrize("value", [True, None, [1], "inf", "one", Decimal("NaN"), float("inf")])
def test_to_decimal_refuses_what_is_not_a_number(value: Any) -> None:
    with pytest.raises(ValueError, match="number"):
        to_decimal(value)


toml_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["input", "output", "price", "type", "x", "enable"]), inner, max_size=3
        )
    ),
    max_leaves=12,
)
tables = st.dictionaries(
    st.sampled_from(
        [*field_names(ModelSettings), *field_names(ProviderSettings), "enable", "junk"]
    ),
    toml_values,
    max_size=6,
)


@given(tables, st.sampled_from([ModelSettings, ProviderSettings, PluginToggles]))
def test_any_table_gives_a_record_or_a_table_error(table: dict[str, Any], record: type) -> None:
    try:
        built = from_table(record, table, "section")
    except TableError as exc:
        assert exc.key.startswith("section")
        return
    assert isinstance(built, record)
    for name in field_names(record):
        if name in table and name != "price":
            assert getattr(built, name) == table[name]
