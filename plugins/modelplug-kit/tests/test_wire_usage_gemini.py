"""usage_from_gemini against Google's documented meaning of usageMetadata:
promptTokenCount includes cachedContentTokenCount ("still the total effective prompt
size"), thoughtsTokenCount is apart from candidatesTokenCount and billed as output,
toolUsePromptTokenCount is apart from promptTokenCount (totalTokenCount adds all four)."""

from __future__ import annotations

from modelplug.contract.types import Usage
from modelplug_kit import usage_from_gemini


def test_from_gemini_a_recorded_thinking_answer() -> None:
    # simonw/llm-gemini issue #97: 5 + 44 + 186 = 235 = totalTokenCount
    raw = {
        "promptTokenCount": 5,
        "candidatesTokenCount": 44,
        "totalTokenCount": 235,
        "thoughtsTokenCount": 186,
    }
    assert usage_from_gemini(raw) == Usage(input=5, output=230, reasoning=186)


def test_from_gemini_cache_and_tool_prompt() -> None:
    raw = {
        "promptTokenCount": 1000,
        "cachedContentTokenCount": 800,
        "candidatesTokenCount": 50,
        "toolUsePromptTokenCount": 90,
        "totalTokenCount": 1140,
    }
    usage = usage_from_gemini(raw)
    assert usage == Usage(input=200 + 90, output=50, cache_read=800)
    assert usage is not None and usage.total == raw["totalTokenCount"]


def test_from_gemini_refuses_what_cannot_be_counts() -> None:
    assert usage_from_gemini({"promptTokenCount": 10, "cachedContentTokenCount": 11}) is None
    assert usage_from_gemini({"promptTokenCount": -1}) is None
    assert usage_from_gemini({"promptTokenCount": True}) is None
    assert usage_from_gemini(None) is None
    assert usage_from_gemini({}) == Usage()
