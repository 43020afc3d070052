"""Reasoning dialects: how an endpoint is asked to think (seed 004).

All of them share one route (/chat/completions) and most servers silently ignore the
fields of the others, so the dialect is chosen from the endpoint's server
(``Endpoint.server``), the address and the model id rather than probed;
``reasoning_dialect`` in a model's settings overrides it (a LiteLLM proxy in front of
OpenRouter has neither in its address).
"""

from __future__ import annotations

from typing import Any

from modelplug.types import Route, ThinkingRequest

__all__ = ["DIALECTS", "detect_dialect", "reasoning_fields"]

DIALECTS = ("llamacpp", "openrouter", "openai", "anthropic", "none")
_BY_SERVER = {
    "llamacpp": "llamacpp",
    "vllm": "llamacpp",  # vLLM reads chat_template_kwargs.enable_thinking too
    "openrouter": "openrouter",
    "openai": "openai",
    "ollama": "openai",
    "lmstudio": "openai",
    "litellm": "openai",  # LiteLLM maps reasoning_effort to each upstream's own field
}
_EFFORT_BUDGET = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 32768,
    "max": 65536,
}


def detect_dialect(route: Route) -> str:
    """The route's dialect: settings first, then server, address and model id."""
    if route.info.reasoning_dialect:
        return route.info.reasoning_dialect
    server = route.endpoint.server
    if server is not None and server in _BY_SERVER:
        return _BY_SERVER[server]
    base = (route.endpoint.base_url or "").lower()
    if "openrouter.ai" in base:
        return "openrouter"
    if "api.openai.com" in base:
        return "openai"
    if route.model.rsplit("/", 1)[-1].startswith("claude"):
        return "anthropic"
    return "openai"


def _effort(thinking: ThinkingRequest) -> str:
    if thinking.effort is not None:
        return {"xhigh": "high", "max": "high"}.get(thinking.effort, thinking.effort)
    budget = thinking.budget_tokens
    if budget is None:
        return "medium"
    return "low" if budget <= 2048 else "medium" if budget <= 8192 else "high"


def _budget(thinking: ThinkingRequest) -> int | None:
    if thinking.budget_tokens is not None:
        return thinking.budget_tokens
    if thinking.effort is not None:
        return _EFFORT_BUDGET[thinking.effort]
    return None


def reasoning_fields(dialect: str, thinking: ThinkingRequest | None) -> dict[str, Any]:
    """The body fields that ask for ``thinking`` in ``dialect`` (empty: ask nothing)."""
    if thinking is None or dialect == "none":
        return {}
    if dialect == "llamacpp":
        fields: dict[str, Any] = {"chat_template_kwargs": {"enable_thinking": thinking.enabled}}
        if thinking.enabled and thinking.budget_tokens is not None:
            fields["reasoning_budget_tokens"] = thinking.budget_tokens
        return fields
    if dialect == "openrouter":
        if not thinking.enabled:
            return {"reasoning": {"enabled": False}}
        if thinking.budget_tokens is not None and thinking.effort is None:
            return {"reasoning": {"max_tokens": thinking.budget_tokens}}
        return {"reasoning": {"effort": _effort(thinking)}}
    if dialect == "anthropic":
        if not thinking.enabled:
            return {"thinking": {"type": "disabled"}}
        return {"thinking": {"type": "enabled", "budget_tokens": _budget(thinking) or 8192}}
    # openai (also what LiteLLM maps per provider)
    return {"reasoning_effort": _effort(thinking) if thinking.enabled else "none"}
