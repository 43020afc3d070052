"""Reasoning dialects: how an endpoint is asked to think (seed 004).

All of them share one route (/chat/completions) and most servers silently ignore the
fields of the others, so the dialect is chosen from the endpoint's server
(``Endpoint.server``), the address and the model id rather than probed;
``reasoning_dialect`` in a model's settings overrides it (a LiteLLM proxy in front of
OpenRouter has neither in its address).
"""

from __future__ import annotations

from typing import Any

from modelplug import DEFAULT_BUDGET_MESSAGE, Notice, Request, Route, ThinkingRequest

__all__ = ["DIALECTS", "detect_dialect", "fit_thinking", "reasoning_fields"]

DIALECTS = ("llamacpp", "openrouter", "openai", "anthropic", "deepseek", "groq", "none")
_BY_SERVER = {
    "llamacpp": "llamacpp",
    "vllm": "llamacpp",  # vLLM reads chat_template_kwargs.enable_thinking too
    "openrouter": "openrouter",
    "openai": "openai",
    "ollama": "openai",
    "lmstudio": "openai",
    "litellm": "openai",  # LiteLLM maps reasoning_effort to each upstream's own field
    # DeepSeek switches thinking with {"thinking": {"type": ...}} (its thinking-mode guide).
    "deepseek": "deepseek",
    # Groq: reasoning_effort, plus reasoning_format "parsed" so Qwen3's thinking comes in
    # delta.reasoning rather than as <think> text; Qwen3 takes "none" | "default" only.
    "groq": "groq",
}
_EFFORT_BUDGET = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 32768,
    "max": 65536,
}
# Claude's thinking, asked through an OpenAI-compatible endpoint, takes budget_tokens
# from this up to max_tokens - 1 (thinking counts toward the cap).
ANTHROPIC_MIN_BUDGET = 1024
DEFAULT_ANTHROPIC_BUDGET = 8192


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


def fit_thinking(request: Request, route: Route) -> tuple[Request, Notice | None]:
    """``request`` with a thinking budget that fits under its ``max_tokens`` in the
    anthropic dialect, and the Notice saying what changed (None: nothing did).

    A caller's ``max_tokens`` is never raised (modelplug-anthropic's rule): the budget
    is brought under it, or thinking is left out when no budget Claude takes fits."""
    asked, cap = request.thinking, request.max_tokens
    if asked is None or not asked.enabled or cap is None:
        return request, None
    if detect_dialect(route) != "anthropic":
        return request, None
    budget = _budget(asked) or DEFAULT_ANTHROPIC_BUDGET
    if ANTHROPIC_MIN_BUDGET <= budget < cap:
        return request, None
    highest = cap - 1
    if highest < ANTHROPIC_MIN_BUDGET:
        thinking = ThinkingRequest(enabled=False, hide=asked.hide)
        sent: int | None = None
        message = (
            f"max_tokens {cap} leaves no room for the thinking budget of {budget} "
            f"(Claude takes budget_tokens from {ANTHROPIC_MIN_BUDGET} to max_tokens - 1), "
            f"so this request goes without thinking and keeps max_tokens {cap}"
        )
    else:
        sent = min(max(budget, ANTHROPIC_MIN_BUDGET), highest)
        thinking = asked.model_copy(update={"budget_tokens": sent, "effort": None})
        why = (
            f"is below Claude's minimum of {ANTHROPIC_MIN_BUDGET}"
            if budget < ANTHROPIC_MIN_BUDGET
            else f"does not fit under max_tokens {cap} (thinking counts toward it)"
        )
        message = (
            f"thinking budget_tokens {budget} {why}: sent as {sent}, with max_tokens {cap} as asked"
        )
    notice = Notice(
        kind="thinking_budget",
        message=message,
        details={"budget_tokens": budget, "max_tokens": cap, "sent_budget_tokens": sent},
    )
    return request.model_copy(update={"thinking": thinking}), notice


def reasoning_fields(
    dialect: str,
    thinking: ThinkingRequest | None,
    model: str = "",
    server: str | None = None,
) -> dict[str, Any]:
    """The body fields that ask for ``thinking`` in ``dialect`` (empty: ask nothing);
    ``model`` is the model id, for the dialects whose fields differ by model.

    A budget in the llama.cpp dialect goes with the message llama-server injects at the
    cut (``reasoning_budget_message``, modelplug's default; ``extra`` overrides it),
    except to vLLM (``server``), which shares the dialect's other fields but has no such
    message."""
    if thinking is None or dialect == "none":
        return {}
    if dialect == "deepseek":
        return {"thinking": {"type": "enabled" if thinking.enabled else "disabled"}}
    if dialect == "groq" and "qwen3" in model.lower():
        return {
            "reasoning_effort": "default" if thinking.enabled else "none",
            "reasoning_format": "hidden" if thinking.hide else "parsed",
        }
    if dialect == "llamacpp":
        fields: dict[str, Any] = {"chat_template_kwargs": {"enable_thinking": thinking.enabled}}
        if thinking.enabled and thinking.budget_tokens is not None:
            fields["reasoning_budget_tokens"] = thinking.budget_tokens
            if server != "vllm":
                fields["reasoning_budget_message"] = DEFAULT_BUDGET_MESSAGE
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
        return {
            "thinking": {
                "type": "enabled",
                "budget_tokens": _budget(thinking) or DEFAULT_ANTHROPIC_BUDGET,
            }
        }
    # openai (also what LiteLLM maps per provider)
    return {"reasoning_effort": _effort(thinking) if thinking.enabled else "none"}
