"""One Usage constructor per wire shape, each applying the rule that ``input`` excludes
the cache and ``output`` includes reasoning."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplug.contract.types import Usage
from modelplug_kit import (
    usage_from_anthropic,
    usage_from_gemini,
    usage_from_ollama,
    usage_from_openai,
    usage_from_responses,
)


def test_from_openai_takes_cached_tokens_out_of_the_prompt() -> None:
    raw = {
        "prompt_tokens": 100,
        "completion_tokens": 30,
        "prompt_tokens_details": {"cached_tokens": 60},
        "completion_tokens_details": {"reasoning_tokens": 10},
    }
    assert usage_from_openai(raw) == Usage(input=40, output=30, cache_read=60, reasoning=10)


def test_from_anthropic_keeps_input_as_sent_and_counts_web_searches() -> None:
    raw = {
        "input_tokens": 12,
        "output_tokens": 7,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 50,
        "server_tool_use": {"web_search_requests": 2},
    }
    assert usage_from_anthropic(raw) == Usage(
        input=12, output=7, cache_read=100, cache_write=50, web_searches=2
    )


def test_from_responses_takes_cached_tokens_out_of_the_input() -> None:
    raw = {
        "input_tokens": 328,
        "input_tokens_details": {"cached_tokens": 128},
        "output_tokens": 52,
        "output_tokens_details": {"reasoning_tokens": 40},
        "total_tokens": 380,
    }
    assert usage_from_responses(raw) == Usage(input=200, output=52, cache_read=128, reasoning=40)


def test_from_gemini_bills_thoughts_as_output_and_tool_prompts_as_input() -> None:
    raw = {
        "promptTokenCount": 120,
        "cachedContentTokenCount": 20,
        "candidatesTokenCount": 15,
        "thoughtsTokenCount": 85,
        "toolUsePromptTokenCount": 5,
    }
    assert usage_from_gemini(raw) == Usage(input=105, output=100, cache_read=20, reasoning=85)


def test_from_ollama_reads_the_eval_counts() -> None:
    assert usage_from_ollama({"prompt_eval_count": 26, "eval_count": 290}) == Usage(
        input=26, output=290
    )


KEYS = st.sampled_from(
    [
        "prompt_tokens",
        "completion_tokens",
        "prompt_tokens_details",
        "cached_tokens",
        "completion_tokens_details",
        "reasoning_tokens",
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "server_tool_use",
        "input_tokens_details",
        "output_tokens_details",
        "promptTokenCount",
        "cachedContentTokenCount",
        "candidatesTokenCount",
        "thoughtsTokenCount",
        "toolUsePromptTokenCount",
        "prompt_eval_count",
        "eval_count",
        "other",
    ]
)
VALUES = st.one_of(st.integers(-5, 10**6), st.text(max_size=3), st.booleans(), st.none())
SHAPES = st.one_of(
    st.none(),
    st.lists(st.integers()),
    st.dictionaries(KEYS, st.one_of(VALUES, st.dictionaries(KEYS, VALUES, max_size=3)), max_size=8),
)


@pytest.mark.parametrize(
    "constructor",
    [
        usage_from_openai,
        usage_from_anthropic,
        usage_from_responses,
        usage_from_gemini,
        usage_from_ollama,
    ],
)
@given(raw=SHAPES)
def test_any_shape_gives_a_usage_or_none(constructor: Any, raw: Any) -> None:
    usage = constructor(raw)
    assert usage is None or isinstance(usage, Usage)
