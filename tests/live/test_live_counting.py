"""Counting before sending against a real llama-server: Client.count_prompt (rendered by
/apply-template, tokenized by /tokenize) equals the prompt_tokens the server reports
for the same request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from modelplug import Client

MODEL = "live/gemma-3-270m"
PROMPTS: list[tuple[str, Any, dict[str, Any]]] = [
    ("one user turn", "Name three rivers.", {}),
    ("with a system prompt", "Name three rivers.", {"system": "Answer in French."}),
    (
        "three turns",
        [
            {"role": "user", "content": "What is 2 + 2?"},
            {"role": "assistant", "content": "4."},
            {"role": "user", "content": "And twice that? Answer with a number only."},
        ],
        {},
    ),
    ("unicode", "Übersetze bitte: 東京は大きい都市です。🚆", {}),
]


@pytest.mark.parametrize(("name", "messages", "fields"), PROMPTS, ids=[p[0] for p in PROMPTS])
def test_count_prompt_is_what_llama_server_reports(
    live_client: Callable[..., Client], name: str, messages: Any, fields: dict[str, Any]
) -> None:
    client = live_client()
    counted = client.count_prompt(MODEL, messages, **fields)
    # No prompt cache: every prompt token is evaluated, and reported as input.
    response = client.complete(
        MODEL, messages, max_tokens=1, temperature=0, extra={"cache_prompt": False}, **fields
    )
    reported = response.usage.input + response.usage.cache_read
    print(f"\nLIVE count_prompt [{name}]: counted {counted}, llama-server reported {reported}")
    assert response.usage.reported
    assert counted == reported


def test_count_tokens_counts_text_alone(live_client: Callable[..., Client]) -> None:
    client = live_client()
    short = client.count_tokens(MODEL, "Hello")
    longer = client.count_tokens(MODEL, "Hello " * 50)
    prompt = client.count_prompt(MODEL, "Hello")
    print(f"\nLIVE count_tokens: 'Hello' {short}, 'Hello ' x 50 {longer}, as a prompt {prompt}")
    assert short is not None and longer is not None and prompt is not None
    assert 0 < short < longer
    # The chat template's turn markers are part of a prompt, not of the text.
    assert prompt > short


def test_an_auto_budget_is_sized_from_the_probed_window(
    live_client: Callable[..., Client],
) -> None:
    client = live_client()
    info = client.probe(MODEL)
    assert info is not None and info.context_window is not None
    budget = client.thinking_budget(MODEL, "Name three rivers.", reserve=512)
    counted = client.count_prompt(MODEL, "Name three rivers.")
    print(
        f"\nLIVE thinking budget: window {info.context_window}, prompt {counted}, budget {budget}"
    )
    assert counted is not None
    assert budget == info.context_window - counted - 512
