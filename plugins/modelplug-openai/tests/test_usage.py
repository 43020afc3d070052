"""usage_from_responses: the issue's rule, on the shapes the API sends."""

from __future__ import annotations

from modelplug.contract.types import Usage
from modelplug_kit import usage_from_responses


def test_cached_tokens_are_taken_out_of_input():
    usage = usage_from_responses(
        {
            "input_tokens": 543,
            "input_tokens_details": {"cached_tokens": 234},
            "output_tokens": 478,
            "output_tokens_details": {"reasoning_tokens": 123},
            "total_tokens": 1021,
        }
    )
    assert usage == Usage(input=309, cache_read=234, output=478, reasoning=123)


def test_cache_writes_where_reported_are_taken_out_too():
    usage = usage_from_responses(
        {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 10, "cache_write_tokens": 30},
            "output_tokens": 5,
        }
    )
    assert usage == Usage(input=60, cache_read=10, cache_write=30, output=5)
    assert usage.total_input == 100


def test_missing_details_and_broken_counts():
    assert usage_from_responses({"input_tokens": 3, "output_tokens": 4}) == Usage(input=3, output=4)
    assert usage_from_responses({"input_tokens": 3, "output_tokens": None}) is None
    assert (
        usage_from_responses(
            {"input_tokens": 3, "output_tokens": 4, "input_tokens_details": {"cached_tokens": 9}}
        )
        is None
    )
    assert usage_from_responses({"input_tokens": True, "output_tokens": 4}) is None
    assert usage_from_responses(None) is None
    # Reasoning larger than the output it is part of is not believed.
    assert (
        usage_from_responses(
            {
                "input_tokens": 3,
                "output_tokens": 4,
                "output_tokens_details": {"reasoning_tokens": 9},
            }
        ).reasoning
        == 0
    )
