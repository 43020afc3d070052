"""The one token estimate for servers that report no usage."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplug import estimate_tokens, estimated_usage
from modelplug.testing import examples


def test_four_characters_make_a_token_rounded_up() -> None:
    assert [estimate_tokens(n) for n in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]
    assert estimate_tokens("hello") == 2


def test_an_estimated_usage_says_it_was_not_reported() -> None:
    usage = estimated_usage(sent_chars=41, got_chars=3)

    assert (usage.input, usage.output, usage.reported) == (11, 1, False)


def test_words_are_counted_as_split_counts_them_across_slice_boundaries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The floor of a prompt's tokens: one word counted twice where a slice boundary cuts
    # it would make a prompt that fits look too long.
    from modelplug.contract import estimate

    monkeypatch.setattr(estimate, "_SLICE", 7)

    @given(st.text(alphabet=st.sampled_from("ab \n\t\u3000\xa0"), max_size=200))
    @settings(max_examples=examples(300), deadline=None)
    def check(text: str) -> None:
        assert estimate.count_words(text) == len(text.split())

    check()
