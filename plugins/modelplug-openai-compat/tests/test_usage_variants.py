"""Usage a provider reports its own way: reasoning outside completion_tokens (xAI),
cache counts above prompt_tokens, usage only in Groq's ``x_groq``."""

from __future__ import annotations

from pathlib import Path

from modelplug.contract.types import Usage

RECORDINGS = Path(__file__).parent / "recordings"


def test_xai_reasoning_outside_completion_tokens_counts_as_output(compat, wire_server):
    wire_server.add_file(RECORDINGS / "xai_reasoning_usage.sse")
    response = compat().complete("wire/grok-4", "hi")
    assert response.text == "Forty-two."
    assert response.usage == Usage(input=9992, cache_read=128, output=4308, reasoning=2809)
    assert response.usage.total == 14428  # the server's own total_tokens
    assert (
        "reasoning_tokens (2809) are outside completion_tokens (1499)"
        in (response.metadata["usage_note"])
    )


def test_cache_above_prompt_keeps_what_the_server_reported_and_says_so(compat, wire_server):
    wire_server.add_file(RECORDINGS / "cache_above_prompt.sse")
    response = compat().complete("wire/claude-sonnet-4-6", "hi")
    assert response.usage == Usage(input=12, cache_read=2048, output=3)
    assert response.usage.reported is True
    assert response.metadata["usage_note"].startswith(
        "the cached tokens (2048) exceed prompt_tokens (12)"
    )


def test_groq_usage_in_x_groq_is_read(compat, wire_server):
    wire_server.add_file(RECORDINGS / "groq_x_groq_usage.sse")
    response = compat().complete("wire/gemma2-9b-it", "hi")
    assert response.text == "Low latency matters."
    assert response.usage == Usage(input=18, output=439)
    assert response.metadata["x_groq"]["id"] == "req_01jadadp0femyae9kav1gpkhe8"


def test_a_plain_usage_has_no_note(compat, wire_server):
    wire_server.add_file(RECORDINGS / "openai_text.sse")
    response = compat().complete("wire/gpt-4o-mini", "hi")
    assert response.usage.reported is True
    assert "usage_note" not in response.metadata
