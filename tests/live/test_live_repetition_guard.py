"""The repetition guard on a real loop: gemma-3-270m, greedy and with no repeat penalty,
asked to repeat a line forever, is cut by the guard; how many bytes and seconds after
the loop began is measured and printed. Ordinary answers are not cut."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from modelplug import Client, Done, Notice, TextDelta

MODEL = "live/gemma-3-270m"
LINE = "the quick brown fox jumps over the lazy dog 42"
GREEDY: dict[str, Any] = {"temperature": 0, "top_k": 1, "repeat_penalty": 1.0, "seed": 7}


def test_a_real_loop_is_cut_and_the_detection_time_measured(
    live_client: Callable[..., Client],
) -> None:
    client = live_client()
    prompt = f"Repeat this line forever, one copy per line, and never stop:\n{LINE}"
    arrived: list[tuple[float, int]] = []  # (monotonic time, bytes of text so far)
    shown = 0
    done: Done | None = None
    started = time.monotonic()
    for event in client.stream(MODEL, prompt, max_tokens=3000, **GREEDY):
        if isinstance(event, TextDelta):
            shown += len(event.text.encode())
            arrived.append((time.monotonic(), shown))
        elif isinstance(event, Done):
            done = event
        elif isinstance(event, Notice):
            print(f"\nLIVE notice: {event.kind}: {event.message}")
    tripped_at = time.monotonic()
    assert done is not None
    response = done.response
    assert response.stop_reason == "repetition", response.text[:400]
    found = response.repetition
    assert found is not None and found.period > 0
    # Where the loop began in the text (offset counts the same channel's text) and
    # when that byte arrived.
    began = next((t for t, size in arrived if size > found.offset), arrived[-1][0])
    after_bytes = shown - found.offset
    print(
        f"\nLIVE guard: period {found.period} B, {found.copies} copies; loop began at byte "
        f"{found.offset}, cut {after_bytes} B and {tripped_at - began:.2f} s later "
        f"({shown} B shown in {tripped_at - started:.2f} s in all); kept {len(response.text)} "
        f"chars, trimmed {found.trimmed} B"
    )
    assert response.text.count(LINE) < 3


# Short answers: on a loaded two-core machine llama-server makes a few tokens a second.
ANSWERS = [
    "Write a haiku about the sea.",
    "List five fruits, one per line.",
    "What is the capital of France? Answer in one sentence.",
]


@pytest.mark.parametrize("prompt", ANSWERS)
def test_ordinary_answers_are_not_cut(live_client: Callable[..., Client], prompt: str) -> None:
    client = live_client()
    response = client.complete(MODEL, prompt, max_tokens=160, temperature=0.7, seed=11)
    print(f"\nLIVE answer ({response.stop_reason}, {len(response.text)} chars): {prompt}")
    assert response.stop_reason != "repetition", response.text
