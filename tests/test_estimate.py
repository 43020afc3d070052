"""The one token estimate for servers that report no usage."""

from __future__ import annotations

from modelplug.plugin import estimated_usage
from modelplug.plugin.wire import estimate_tokens


def test_four_characters_make_a_token_rounded_up() -> None:
    assert [estimate_tokens(n) for n in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]
    assert estimate_tokens("hello") == 2


def test_an_estimated_usage_says_it_was_not_reported() -> None:
    usage = estimated_usage(sent_chars=41, got_chars=3)

    assert (usage.input, usage.output, usage.reported) == (11, 1, False)
