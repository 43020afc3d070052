"""Properties of the readers of the hosted services' own fields, on random JSON: a
value or None, never a stray exception, and nothing read that the service did not say."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from modelplug import Cost, Route, Usage
from modelplug.contract.routes import Endpoint
from modelplug.testing import examples
from modelplug_openai_compat.citations import citations_of
from modelplug_openai_compat.services import (
    LEVELS,
    RULES,
    fit_to_service,
    mistral_call_id,
    nearest_effort,
)
from modelplug_openai_compat.usage import read_usage, server_cost

SHARED = settings(max_examples=examples(300), deadline=None)
# The field names the readers look for, so random objects reach every branch.
NAMES = st.sampled_from(
    [
        "citations",
        "search_results",
        "url",
        "title",
        "cost",
        "total_cost",
        "cost_in_usd_ticks",
        "estimated_cost",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "prompt_tokens_details",
        "cached_tokens",
        "prompt_cache_hit_tokens",
        "num_search_queries",
        "completion_tokens_details",
        "reasoning_tokens",
    ]
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.just("https://example.com/a")
)
JSON: st.SearchStrategy[Any] = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(NAMES | st.text(max_size=6), inner, max_size=6)
    ),
    max_leaves=24,
)
OBJECTS = st.dictionaries(NAMES, JSON, max_size=8)


@SHARED
@given(OBJECTS)
def test_citations_are_none_or_entries_with_a_url(metadata: dict[str, Any]) -> None:
    found = citations_of(metadata)
    assert found is None or found  # never an empty list
    for entry in found or []:
        assert isinstance(entry["url"], str) and entry["url"].strip()


@SHARED
@given(JSON)
def test_a_usage_is_read_or_none(raw: Any) -> None:
    usage = read_usage(raw)
    assert usage is None or isinstance(usage, Usage)
    if usage is not None:
        assert min(usage.input, usage.output, usage.cache_read, usage.web_searches) >= 0


@SHARED
@given(JSON)
def test_a_server_cost_is_a_non_negative_dollar_amount_or_none(raw: Any) -> None:
    cost = server_cost(raw, {})
    assert cost is None or (isinstance(cost, Cost) and cost.amount >= Decimal(0))
    if cost is not None:
        assert cost.currency == "USD"


@SHARED
@given(
    effort=st.sampled_from(LEVELS) | st.text(max_size=6),
    allowed=st.lists(st.sampled_from([*LEVELS, "default"]), min_size=1, max_size=4),
)
def test_the_nearest_effort_is_one_the_model_takes(effort: str, allowed: list[str]) -> None:
    assert nearest_effort(effort, tuple(allowed)) in allowed


@SHARED
@given(
    server=st.sampled_from(sorted(RULES)),
    model=st.sampled_from(["grok-4", "grok-3-mini", "qwen/qwen3-32b", "deepseek-reasoner", "m"]),
    body=st.dictionaries(
        st.sampled_from(
            [
                "stop",
                "seed",
                "top_k",
                "tools",
                "tool_choice",
                "temperature",
                "top_p",
                "thinking",
                "reasoning_effort",
                "reasoning_format",
                "stream_options",
            ]
        ),
        JSON,
        max_size=8,
    ),
)
def test_fitting_a_body_never_raises_and_leaves_out_what_it_names(
    server: str, model: str, body: dict[str, Any]
) -> None:
    route = Route(provider=server, model=model, endpoint=Endpoint(type="t", server=server))
    before = dict(body)
    notice = fit_to_service(body, route)
    if notice is None:
        return
    for name in notice.details["fields"]:
        assert name in before and name not in body


@SHARED
@given(JSON)
def test_a_mistral_call_id_is_nine_letters_or_digits_and_the_same_for_the_same_id(
    value: Any,
) -> None:
    renamed = mistral_call_id(value)
    assert len(renamed) == 9 and renamed.isascii() and renamed.isalnum()
    assert mistral_call_id(value) == renamed == mistral_call_id(renamed)
