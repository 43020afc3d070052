"""A thinking budget fitted under the caller's maxOutputTokens, which is never raised.

Gemini counts thought tokens toward ``maxOutputTokens``: a ``thinkingBudget`` at or
above the cap can spend all of it on thinking and leave no answer. So when the caller
sets ``max_tokens``, the budget (its own ``budget_tokens``, or the one its ``effort``
maps to on a 2.5 model) is brought under it; when the model's smallest budget does not
fit either, the request asks for the least thinking the model allows (none on 2.5
Flash and Flash-Lite). A Notice says so before the request goes: the rule
modelplug-anthropic and modelplug-bedrock follow too.
"""

from __future__ import annotations

from modelplug import Notice, Request, Route, ThinkingRequest

from .routes import model_generation, thinking_mode

__all__ = ["NOTICE_KIND", "fit_thinking", "smallest_budget", "thinking_budget"]

NOTICE_KIND = "thinking_budget"
# Thinking budgets (tokens) per effort for the 2.5 models (Flash tops out at 24,576,
# Pro at 32,768).
_BUDGETS = {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576, "xhigh": 32768}


def thinking_budget(thinking: ThinkingRequest, model: str) -> int | None:
    """The ``thinkingBudget`` that thinking turned on asks of ``model``: the caller's
    budget, else its effort's on a 2.5 model; None when it sends none (a level on a
    Gemini 3 model, or the model's own choice)."""
    if thinking.budget_tokens is not None:
        return thinking.budget_tokens
    generation = model_generation(model) or (2, 5)
    if thinking.effort is None or generation >= (3, 0):
        return None
    ceiling = 32768 if "pro" in model else 24576
    return min(_BUDGETS.get(thinking.effort, ceiling), ceiling)


def smallest_budget(model: str) -> int:
    """The smallest thinkingBudget above none that ``model`` takes."""
    if "flash-lite" in model:
        return 512
    return 128 if thinking_mode(model) == "always" else 1


def fit_thinking(request: Request, route: Route) -> tuple[Request, Notice | None]:
    """``request`` with a thinking budget under its ``max_tokens``, and the Notice
    saying what changed (None: nothing did)."""
    asked = request.thinking
    cap = request.max_tokens
    mode = thinking_mode(route.model)
    if asked is None or not asked.enabled or cap is None or mode == "never":
        return request, None
    budget = thinking_budget(asked, route.model)
    if budget is None or budget < cap:
        return request, None  # -1 (the model's own choice) is Gemini's to keep under it
    what = f"thinking budget {budget}" + (
        f" (effort {asked.effort})" if asked.budget_tokens is None else ""
    )
    fitted: int | None = cap - 1
    if cap - 1 < smallest_budget(route.model):
        fitted = None
        thinking = ThinkingRequest(enabled=False, hide=asked.hide)
        least = "without thinking" if mode == "optional" else "with the least thinking it takes"
        message = (
            f"maxOutputTokens {cap} leaves no room for the {what} (thinking counts toward "
            f"it), so this request goes {least} and keeps max_tokens {cap}"
        )
    else:
        thinking = asked.model_copy(update={"budget_tokens": fitted})
        message = (
            f"The {what} does not fit under maxOutputTokens {cap} (thinking counts toward "
            f"it): sent as {fitted}, with max_tokens {cap} as asked"
        )
    notice = Notice(
        kind=NOTICE_KIND,
        message=message,
        details={"budget_tokens": budget, "max_tokens": cap, "sent_budget_tokens": fitted},
    )
    return request.model_copy(update={"thinking": thinking}), notice
