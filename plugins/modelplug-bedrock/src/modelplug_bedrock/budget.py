"""Claude's thinking budget on Bedrock, fitted under the caller's maxTokens, which is
never raised.

Claude takes ``budget_tokens`` from 1024 up to ``max_tokens - 1`` on Bedrock as on
Anthropic's API (thinking counts toward the cap). The budget is the caller's
``budget_tokens`` or the one its ``effort`` maps to; when it does not fit under the
caller's ``max_tokens`` it is brought into that range, or left out when the range is
empty, and a Notice says so before the request goes (the rule modelplug-anthropic
follows too).
"""

from __future__ import annotations

from modelplug import Notice, Request, Route, ThinkingRequest

__all__ = ["BUDGETS", "MIN_BUDGET", "NOTICE_KIND", "claude_budget", "fit_thinking"]

# Claude refuses a smaller budget_tokens.
MIN_BUDGET = 1024
NOTICE_KIND = "thinking_budget"
# Thinking budgets for an effort, for models that take Claude's thinking parameter.
BUDGETS = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 32768,
    "max": 32768,
}


def claude_budget(request: Request, route: Route) -> int | None:
    """The ``budget_tokens`` this request asks of a Claude model on ``route``; None when
    it sends no thinking (not Claude, a model that cannot think, thinking off)."""
    thinking = request.thinking
    can_think = route.info.thinking is not None
    if "anthropic." not in route.model or not can_think or thinking is None:
        return None
    if not thinking.enabled:
        return None
    return thinking.budget_tokens or BUDGETS.get(thinking.effort or "medium", 8192)


def fit_thinking(request: Request, route: Route) -> tuple[Request, Notice | None]:
    """``request`` with a Claude thinking budget that fits under its ``max_tokens``, and
    the Notice saying what changed (None: nothing did)."""
    budget = claude_budget(request, route)
    cap = request.max_tokens
    if budget is None or cap is None or request.thinking is None:
        return request, None
    highest = cap - 1
    fitted = None if highest < MIN_BUDGET else min(max(budget, MIN_BUDGET), highest)
    if fitted == budget:
        return request, None
    asked = request.thinking
    what = f"thinking budget {budget}" + (
        f" (effort {asked.effort or 'medium'})" if asked.budget_tokens is None else ""
    )
    if fitted is None:
        thinking = ThinkingRequest(enabled=False, hide=asked.hide)
        message = (
            f"maxTokens {cap} leaves no room for the {what} (Claude takes budget_tokens "
            f"from {MIN_BUDGET} to maxTokens - 1), so this request goes without thinking "
            f"and keeps maxTokens {cap}; give max_tokens above {MIN_BUDGET} to think"
        )
    else:
        thinking = asked.model_copy(update={"budget_tokens": fitted})
        why = (
            f"is below Claude's minimum of {MIN_BUDGET}"
            if budget < MIN_BUDGET
            else f"does not fit under maxTokens {cap} (thinking counts toward it)"
        )
        message = f"The {what} {why}: sent as {fitted}, with maxTokens {cap} as asked"
    notice = Notice(
        kind=NOTICE_KIND,
        message=message,
        details={"budget_tokens": budget, "max_tokens": cap, "sent_budget_tokens": fitted},
    )
    return request.model_copy(update={"thinking": thinking}), notice
