"""``usage_from_openai``: the Chat Completions usage shape and its stated variants."""

from __future__ import annotations

import pytest
from modelplug.contract.types import Usage
from modelplug_kit import usage_from_openai


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            {
                "prompt_tokens": 100,
                "completion_tokens": 20,
                "total_tokens": 120,
                "prompt_tokens_details": {"cached_tokens": 60},
                "completion_tokens_details": {"reasoning_tokens": 5},
            },
            Usage(input=40, cache_read=60, output=20, reasoning=5),
        ),
        (
            {"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": None},
            Usage(input=10, output=2),
        ),
        ({"prompt_tokens": 10}, None),
        ({"prompt_tokens": -1, "completion_tokens": 2}, None),
        ({"prompt_tokens": True, "completion_tokens": 2}, None),
        ({"prompt_tokens": 1.5, "completion_tokens": 2}, None),
        (
            {
                "prompt_tokens": 1,
                "completion_tokens": 2,
                "prompt_tokens_details": {"cached_tokens": -1},
            },
            None,
        ),
        (None, None),
        ("usage", None),
    ],
)
def test_from_openai_reads_the_plain_shape_and_refuses_what_is_no_count(raw, expected):
    assert usage_from_openai(raw) == expected


def test_from_openai_reasoning_outside_completion_tokens_is_added_to_output():
    # xAI's numbers as a user reported them (sub2api issue 5771): total = prompt +
    # completion + reasoning, so completion_tokens left the reasoning out.
    raw = {
        "prompt_tokens": 10120,
        "completion_tokens": 1499,
        "total_tokens": 14428,
        "prompt_tokens_details": {"cached_tokens": 128},
        "completion_tokens_details": {"reasoning_tokens": 2809},
    }
    assert usage_from_openai(raw) == Usage(
        input=9992, cache_read=128, output=1499 + 2809, reasoning=2809
    )


def test_from_openai_reasoning_above_completion_without_a_total_is_outside():
    raw = {
        "prompt_tokens": 5,
        "completion_tokens": 1,
        "completion_tokens_details": {"reasoning_tokens": 386},
    }
    assert usage_from_openai(raw) == Usage(input=5, output=387, reasoning=386)


def test_from_openai_reasoning_inside_completion_stays_inside():
    raw = {
        "prompt_tokens": 5,
        "completion_tokens": 400,
        "total_tokens": 405,
        "completion_tokens_details": {"reasoning_tokens": 386},
    }
    assert usage_from_openai(raw) == Usage(input=5, output=400, reasoning=386)


def test_from_openai_cache_above_prompt_keeps_what_was_reported():
    raw = {
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "prompt_tokens_details": {"cached_tokens": 11},
    }
    assert usage_from_openai(raw) == Usage(input=10, cache_read=11, output=2)


def test_from_openai_an_invalid_reasoning_count_is_left_out_not_the_usage():
    raw = {
        "prompt_tokens": 3,
        "completion_tokens": 2,
        "completion_tokens_details": {"reasoning_tokens": "x"},
    }
    assert usage_from_openai(raw) == Usage(input=3, output=2)
