"""A thinking budget fitted under the caller's max_tokens, which is never raised.

Thinking counts toward ``max_tokens``, and the Messages API takes ``budget_tokens`` from
1024 up to ``max_tokens - 1``. A caller's ``max_tokens`` is what it agreed to pay for
(Claude Code sends 300 with a budget of 299), so the budget gives way: brought into
that range, or left out when the range is empty. Either way a Notice says what was
sent instead of what was asked. With no ``max_tokens`` from the caller, the plugin
picks one with room for the budget (:mod:`modelplug_anthropic.mapping`).
"""

from __future__ import annotations

from modelplug import Notice, Request, Route, ThinkingRequest

from .routes import thinking_mode

__all__ = ["MIN_BUDGET", "NOTICE_KIND", "fit_budget", "fit_thinking"]

# The API refuses a smaller budget_tokens.
MIN_BUDGET = 1024
NOTICE_KIND = "thinking_budget"


def fit_budget(budget: int, max_tokens: int) -> int | None:
    """The budget the API takes under ``max_tokens`` nearest ``budget``; None when
    ``max_tokens`` leaves no room for the smallest one."""
    highest = max_tokens - 1
    if highest < MIN_BUDGET:
        return None
    return min(max(budget, MIN_BUDGET), highest)


def fit_thinking(request: Request, route: Route) -> tuple[Request, Notice | None]:
    """``request`` with a thinking budget the API takes under its ``max_tokens``, and
    the Notice saying what changed (None: nothing did)."""
    asked = request.thinking
    cap = request.max_tokens
    if asked is None or not asked.enabled or asked.budget_tokens is None or cap is None:
        return request, None
    if (route.info.thinking or thinking_mode(route.model)) == "never" or _forced(request):
        return request, None  # no budget goes to the API: nothing to fit
    budget = asked.budget_tokens
    fitted = fit_budget(budget, cap)
    if fitted == budget:
        return request, None
    if fitted is None:
        thinking = ThinkingRequest(enabled=False, hide=asked.hide)
        message = (
            f"max_tokens {cap} leaves no room for the thinking budget of {budget} "
            f"(Anthropic takes budget_tokens from {MIN_BUDGET} to max_tokens - 1), so this "
            f"request goes without a thinking budget and keeps max_tokens {cap}; give "
            f"max_tokens above {MIN_BUDGET} to think with a budget"
        )
    else:
        thinking = asked.model_copy(update={"budget_tokens": fitted})
        why = (
            f"is below Anthropic's minimum of {MIN_BUDGET}"
            if budget < MIN_BUDGET
            else f"does not fit under max_tokens {cap} (thinking counts toward it)"
        )
        message = (
            f"thinking budget_tokens {budget} {why}: sent as {fitted}, with max_tokens "
            f"{cap} as asked"
        )
    notice = Notice(
        kind=NOTICE_KIND,
        message=message,
        details={"budget_tokens": budget, "max_tokens": cap, "sent_budget_tokens": fitted},
    )
    return request.model_copy(update={"thinking": thinking}), notice


def _forced(request: Request) -> bool:
    # A forced tool sends no thinking at all (mapping.to_wire_params).
    return request.tool_choice not in (None, "auto", "any", "none")
