"""The retry schedule, as properties: the server's wait wins (capped), our own doubles
to a ceiling, and jitter stays within its fraction."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from modelplug_fallback.backoff import retry_wait
from modelplug_fallback.options import FallbackOptions

options_strategy = st.builds(
    FallbackOptions,
    backoff=st.floats(0, 10),
    max_backoff=st.floats(0, 60),
    jitter=st.floats(0, 1),
    max_retry_after=st.floats(0, 120),
)
unit = st.floats(0, 1, exclude_max=True)


@given(options_strategy, st.integers(1, 50), st.floats(0, 10_000), unit)
def test_a_servers_retry_after_is_honoured_up_to_the_cap(
    options: FallbackOptions, retry: int, asked: float, rnd: float
) -> None:
    wait = retry_wait(retry, asked, options, lambda: rnd)

    assert wait.server_asked is True
    assert wait.asked == asked
    assert wait.delay == min(asked, options.max_retry_after)


@given(options_strategy, st.integers(1, 50), unit)
def test_our_own_wait_stays_within_the_jitter_of_the_doubling_schedule(
    options: FallbackOptions, retry: int, rnd: float
) -> None:
    wait = retry_wait(retry, None, options, lambda: rnd)

    base = min(options.max_backoff, options.backoff * 2 ** (retry - 1))
    assert wait.server_asked is False
    assert base * (1 - options.jitter) - 1e-9 <= wait.delay <= base * (1 + options.jitter) + 1e-9
    assert wait.delay >= 0


@given(options_strategy, st.integers(1, 49))
def test_without_jitter_each_wait_is_at_least_the_one_before(
    options: FallbackOptions, retry: int
) -> None:
    middle = 0.5  # random() == 0.5 adds no slack
    earlier = retry_wait(retry, None, options, lambda: middle).delay
    later = retry_wait(retry + 1, None, options, lambda: middle).delay

    assert later >= earlier
    assert later <= max(options.max_backoff, 0)
