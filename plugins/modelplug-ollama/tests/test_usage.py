"""Usage from Ollama's final line (core's usage_from_ollama), and the estimate when a
line carries no counts."""

from __future__ import annotations

import pytest
from modelplug_kit import usage_from_ollama


def test_usage_from_the_final_line():
    usage = usage_from_ollama({"done": True, "prompt_eval_count": 26, "eval_count": 282})
    assert usage is not None
    assert (usage.input, usage.output, usage.cache_read, usage.reported) == (26, 282, 0, True)


def test_a_prompt_served_from_ollamas_cache_leaves_prompt_eval_count_out():
    usage = usage_from_ollama({"done": True, "eval_count": 5})
    assert usage is not None
    assert (usage.input, usage.output) == (0, 5)


@pytest.mark.parametrize(
    "raw",
    [
        None,
        [],
        {"done": True},
        {"eval_count": -1},
        {"eval_count": True},
        {"eval_count": 3, "prompt_eval_count": "10"},
    ],
)
def test_missing_or_invalid_counts_give_none(raw):
    assert usage_from_ollama(raw) is None


def test_a_final_line_without_counts_is_estimated_and_says_so(ollama, wire):
    wire.lines(
        [
            {"message": {"role": "assistant", "content": "four"}, "done": False},
            {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"},
        ]
    )
    usage = ollama().complete("ollama/m", "hi").usage
    assert usage.reported is False
    assert usage.output == 1
    assert usage.input > 0
