"""Usage from each wire's own numbers, so that ``Usage.input`` means one thing.

Every provider counts differently: some include cached tokens in the prompt count,
some report reasoning inside the output count and some beside it. These constructors
(exposed as ``Usage.usage_from_openai``, ``Usage.usage_from_anthropic``, ...) turn each shape into
modelplug's rule: ``input`` excludes cache reads and writes, ``output`` includes
reasoning. Each returns None when the shape is missing or its counts are not
nonnegative integers, so the caller can estimate instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from modelplug import Usage

__all__ = [
    "usage_from_anthropic",
    "usage_from_gemini",
    "usage_from_ollama",
    "usage_from_openai",
    "usage_from_responses",
]


def count(value: Any) -> int | None:
    """A token count: a nonnegative int (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _details(raw: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = raw.get(key)
    return value if isinstance(value, Mapping) else {}


def _usage(**counts: Any) -> Usage:
    from modelplug import Usage

    return Usage.model_validate(counts)


def usage_from_openai(raw: Any) -> Usage | None:
    """Chat Completions ``usage``: ``prompt_tokens`` includes cached tokens
    (``prompt_tokens_details.cached_tokens``, and ``cache_write_tokens`` where a proxy
    reports them); ``completion_tokens`` includes reasoning.

    Two variants are read by stated rules, keeping what the server reported:

    - Reasoning outside ``completion_tokens`` (xAI): when ``total_tokens`` equals
      prompt + completion + reasoning (not prompt + completion), or when the reasoning
      count exceeds the completion count (it cannot be inside it), ``output`` is
      completion + reasoning.
    - Cache counts above ``prompt_tokens`` (a proxy that passes an uncached prompt
      count through): ``prompt_tokens`` is then taken as the uncached input, so
      ``input`` is ``prompt_tokens`` and the cache counts are kept as reported.
    """
    if not isinstance(raw, Mapping):
        return None
    prompt = count(raw.get("prompt_tokens"))
    completion = count(raw.get("completion_tokens"))
    if prompt is None or completion is None:
        return None
    details = _details(raw, "prompt_tokens_details")
    cached = count(details.get("cached_tokens") or 0)
    cache_write = count(details.get("cache_write_tokens") or 0)
    if cached is None or cache_write is None:
        return None
    # A reasoning count that is no count is left out rather than losing the usage.
    reasoning = count(_details(raw, "completion_tokens_details").get("reasoning_tokens") or 0) or 0
    uncached = prompt if cached + cache_write > prompt else prompt - cached - cache_write
    output = (
        completion + reasoning
        if _reasoning_outside(raw, prompt, completion, reasoning)
        else completion
    )
    return _usage(
        input=uncached,
        output=output,
        cache_read=cached,
        cache_write=cache_write,
        reasoning=reasoning,
    )


def _reasoning_outside(
    raw: Mapping[str, Any], prompt: int, completion: int, reasoning: int
) -> bool:
    if not reasoning:
        return False
    total = count(raw.get("total_tokens"))
    if total is not None and total == prompt + completion + reasoning:
        return True
    return reasoning > completion and total != prompt + completion


def usage_from_anthropic(raw: Any) -> Usage | None:
    """Messages API ``usage``: ``input_tokens`` already excludes the cache. Counts left
    out (or null) are 0, as message_delta leaves out what it does not change; a usage
    with neither ``input_tokens`` nor ``output_tokens`` is no usage (None)."""
    if not isinstance(raw, Mapping):
        return None
    if raw.get("input_tokens") is None and raw.get("output_tokens") is None:
        return None
    server = _details(raw, "server_tool_use")
    values = {
        "input": count(raw.get("input_tokens") or 0),
        "output": count(raw.get("output_tokens") or 0),
        "cache_read": count(raw.get("cache_read_input_tokens") or 0),
        "cache_write": count(raw.get("cache_creation_input_tokens") or 0),
        "reasoning": count(_details(raw, "output_tokens_details").get("thinking_tokens") or 0),
        "web_searches": count(server.get("web_search_requests") or 0),
    }
    if any(v is None for v in values.values()):
        return None
    return _usage(**{k: v for k, v in values.items() if v is not None})


def usage_from_responses(raw: Any) -> Usage | None:
    """Responses API ``usage``: ``input_tokens`` includes
    ``input_tokens_details.cached_tokens`` (and ``cache_write_tokens`` where it is
    reported); ``output_tokens`` includes ``output_tokens_details.reasoning_tokens``."""
    if not isinstance(raw, Mapping):
        return None
    prompt = count(raw.get("input_tokens"))
    output = count(raw.get("output_tokens"))
    if prompt is None or output is None:
        return None
    details = _details(raw, "input_tokens_details")
    cached = count(details.get("cached_tokens") or 0)
    cache_write = count(details.get("cache_write_tokens") or 0)
    if cached is None or cache_write is None or cached + cache_write > prompt:
        return None
    reasoning = count(_details(raw, "output_tokens_details").get("reasoning_tokens") or 0)
    if reasoning is None or reasoning > output:
        reasoning = 0
    return _usage(
        input=prompt - cached - cache_write,
        output=output,
        cache_read=cached,
        cache_write=cache_write,
        reasoning=reasoning,
    )


def usage_from_gemini(raw: Any) -> Usage | None:
    """Gemini ``usageMetadata``: ``promptTokenCount`` includes
    ``cachedContentTokenCount``; thoughts (``thoughtsTokenCount``) are billed as output
    beside ``candidatesTokenCount``; ``toolUsePromptTokenCount`` is input."""
    if not isinstance(raw, Mapping):
        return None
    prompt = count(raw.get("promptTokenCount") or 0)
    cached = count(raw.get("cachedContentTokenCount") or 0)
    candidates = count(raw.get("candidatesTokenCount") or 0)
    thoughts = count(raw.get("thoughtsTokenCount") or 0)
    tool_prompt = count(raw.get("toolUsePromptTokenCount") or 0)
    if None in (prompt, cached, candidates, thoughts, tool_prompt):
        return None
    assert prompt is not None and cached is not None and candidates is not None
    assert thoughts is not None and tool_prompt is not None
    if cached > prompt:
        return None
    return _usage(
        input=prompt - cached + tool_prompt,
        output=candidates + thoughts,
        cache_read=cached,
        reasoning=thoughts,
    )


def usage_from_ollama(raw: Any) -> Usage | None:
    """Ollama's final ``/api/chat`` line: ``prompt_eval_count`` and ``eval_count``
    (Ollama leaves ``prompt_eval_count`` out when the whole prompt was cached)."""
    if not isinstance(raw, Mapping):
        return None
    output = count(raw.get("eval_count"))
    prompt = count(raw.get("prompt_eval_count") or 0)
    if output is None or prompt is None:
        return None
    return _usage(input=prompt, output=output)
