"""modelplug_key_budget: LiteLLM's /key/info, OpenRouter's /api/v1/key, LiteLLM's
per-response x-litellm-key-* headers; the probe and what core remembers of it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplug import KeyBudget, ModelError, NoKeyBudgetError
from modelplug_kit.testing import WireServer, load_recording
from modelplug_openai_compat.budget import (
    budget_from_headers,
    read_key_info,
    read_openrouter_key,
)

RECORDINGS = Path(__file__).parent / "recordings"
KEY = {"WIRE_KEY": "sk-wire-budget-0123456789"}
NOT_FOUND = '{"detail":"Not Found"}'


def recorded(wire: WireServer, name: str, path: str) -> None:
    wire.add_file(RECORDINGS / name, path=path, content_type="application/json", chunk_size=1 << 16)


def test_modelplug_key_budget(compat: Any, wire_server: WireServer) -> None:
    """A LiteLLM proxy's /key/info: the calling key's spend, budget and reset, in USD."""
    recorded(wire_server, "litellm_key_info.json", "/key/info")
    client = compat(server="litellm", api_key_env="WIRE_KEY", environ=KEY)
    budget = client.key_budget("wire/claude-haiku")
    assert budget == KeyBudget(
        source="litellm-key-info",
        spend=Decimal("12.5"),
        limit=Decimal("50.0"),
        remaining=Decimal("37.5"),
        reset_at=datetime(2026, 12, 31, tzinfo=UTC),
        interval="30d",
        currency="USD",
    )
    sent = wire_server.requests[-1]
    assert (sent.method, sent.path) == ("GET", "/key/info")
    assert sent.headers["authorization"] == "Bearer sk-wire-budget-0123456789"


def test_openrouter_credits_are_not_called_dollars(compat: Any, wire_server: WireServer) -> None:
    recorded(wire_server, "openrouter_key.json", "/v1/key")
    budget = compat(server="openrouter").key_budget("wire/qwen/qwen3")
    assert (budget.source, budget.currency) == ("openrouter", "credits")
    assert (budget.spend, budget.limit, budget.remaining) == (
        Decimal("25.5"),
        Decimal("100"),
        Decimal("74.5"),
    )
    assert (budget.interval, budget.reset_at) == ("monthly", None)
    assert wire_server.requests[-1].path == "/v1/key"


def test_an_older_openrouter_answer_has_no_interval() -> None:
    data = json.loads(load_recording(RECORDINGS / "openrouter_key_no_reset.json"))
    budget = read_openrouter_key(data)
    assert budget is not None
    assert (budget.limit, budget.remaining, budget.interval) == (
        Decimal("5"),
        Decimal("4.8984355238"),
        None,
    )


def test_an_unnamed_server_is_probed_once_then_asked_once(
    compat: Any, wire_server: WireServer
) -> None:
    """/key/info answers 404, /api/v1/key answers: the second call goes straight there."""
    wire_server.add(NOT_FOUND, status=404, path="/key/info", content_type="application/json")
    recorded(wire_server, "openrouter_key.json", "/v1/key")
    client = compat()
    assert client.key_budget("wire/m").source == "openrouter"
    assert [r.path for r in wire_server.requests] == ["/key/info", "/v1/key"]
    recorded(wire_server, "openrouter_key.json", "/v1/key")
    assert client.key_budget("wire/other-model").spend == Decimal("25.5")
    assert [r.path for r in wire_server.requests] == ["/key/info", "/v1/key", "/v1/key"]


def test_no_key_budget_is_a_typed_answer_remembered(compat: Any, wire_server: WireServer) -> None:
    wire_server.add(NOT_FOUND, status=404, path="/key/info", content_type="application/json")
    wire_server.add(NOT_FOUND, status=404, path="/v1/key", content_type="application/json")
    client = compat()
    with pytest.raises(NoKeyBudgetError, match="exposes no key budget"):
        client.key_budget("wire/m")
    asked = len(wire_server.requests)
    with pytest.raises(NoKeyBudgetError):
        client.key_budget("wire/m")
    assert len(wire_server.requests) == asked == 2


def test_a_model_server_without_keys_is_not_asked(compat: Any, wire_server: WireServer) -> None:
    with pytest.raises(NoKeyBudgetError):
        compat(server="llamacpp").key_budget("wire/gemma")
    assert wire_server.requests == []


def test_a_failure_is_raised_and_not_remembered(compat: Any, wire_server: WireServer) -> None:
    wire_server.add('{"error":"down"}', status=503, path="/key/info")
    client = compat(server="litellm", api_key_env="WIRE_KEY", environ=KEY)
    with pytest.raises(ModelError) as failed:
        client.key_budget("wire/m")
    assert not isinstance(failed.value, NoKeyBudgetError)
    assert "sk-wire-budget" not in str(failed.value)
    recorded(wire_server, "litellm_key_info.json", "/key/info")
    assert client.key_budget("wire/m").spend == Decimal("12.5")


def test_a_page_that_is_not_a_budget_is_no_budget(compat: Any, wire_server: WireServer) -> None:
    """A server that answers every path with its login page exposes no budget."""
    wire_server.add_file(
        RECORDINGS / "html_login_page.html", path="/key/info", content_type="text/html"
    )
    with pytest.raises(NoKeyBudgetError):
        compat(server="litellm").key_budget("wire/m")


def test_litellm_headers_state_spend_and_budget() -> None:
    """The names and decimal strings LiteLLM stamps (docs.litellm.ai, "Response
    headers"); a max budget of None is sent as the text "None"."""
    budget = budget_from_headers({"x-litellm-key-spend": "1.25", "x-litellm-key-max-budget": "10"})
    assert budget == KeyBudget(
        source="litellm-headers",
        spend=Decimal("1.25"),
        limit=Decimal("10"),
        remaining=Decimal("8.75"),
        currency="USD",
    )
    unlimited = budget_from_headers(
        {"x-litellm-key-spend": "0.0", "x-litellm-key-max-budget": "None"}
    )
    assert unlimited is not None and unlimited.limit is None and unlimited.remaining is None
    assert budget_from_headers({"x-ratelimit-remaining-requests": "9"}) is None


BUDGET_FIELDS = [
    "spend",
    "max_budget",
    "budget_reset_at",
    "budget_duration",
    "usage",
    "limit",
    "limit_remaining",
    "limit_reset",
]
_json = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


@given(
    st.dictionaries(
        st.sampled_from(["info", "data", "served_by", "key"]),
        st.dictionaries(
            st.sampled_from(BUDGET_FIELDS),
            _json,
        )
        | _json,
    )
)
def test_any_answer_reads_as_a_budget_or_none(data: dict[str, Any]) -> None:
    for read in (read_key_info, read_openrouter_key):
        assert read(data) is None or isinstance(read(data), KeyBudget)


@given(
    st.dictionaries(st.sampled_from(["x-litellm-key-spend", "x-litellm-key-max-budget"]), st.text())
)
def test_any_headers_read_as_a_budget_or_none(headers: dict[str, str]) -> None:
    budget = budget_from_headers(headers)
    assert budget is None or budget.source == "litellm-headers"


def test_the_memory_is_per_base_url_and_key_and_holds_no_key(
    compat: Any, wire_server: WireServer
) -> None:
    """Two providers at one URL: the same key shares what was learnt, another key probes
    anew. What is remembered names the key by a short hash only."""
    other = {"type": "openai-compatible", "base_url": wire_server.url + "/v1"}
    providers = {
        "first": {**other, "api_key_env": "WIRE_KEY"},
        "same": {**other, "api_key_env": "WIRE_KEY"},
        "other": {**other, "api_key_env": "OTHER_KEY"},
    }
    environ = {**KEY, "OTHER_KEY": "sk-other-budget-9876543210"}
    client = compat({"providers": providers}, environ=environ)
    wire_server.add(NOT_FOUND, status=404, path="/key/info", content_type="application/json")
    recorded(wire_server, "openrouter_key.json", "/v1/key")
    client.key_budget("first/m")
    recorded(wire_server, "openrouter_key.json", "/v1/key")
    client.key_budget("same/m")  # the same URL and key: straight to the source
    assert [r.path for r in wire_server.requests] == ["/key/info", "/v1/key", "/v1/key"]
    wire_server.add(NOT_FOUND, status=404, path="/key/info", content_type="application/json")
    recorded(wire_server, "openrouter_key.json", "/v1/key")
    client.key_budget("other/m")  # another key: probed anew
    assert [r.path for r in wire_server.requests][3:] == ["/key/info", "/v1/key"]
    remembered = repr(vars(client._budget_sources))
    assert "sk-wire-budget" not in remembered and "sk-other-budget" not in remembered
