"""What the model id says about a model: whether it reasons, and the effort levels it
takes. OpenAI's families differ: o-series models reason at low, medium or high; gpt-5
adds ``minimal``; gpt-5.1 and later add ``none`` (no reasoning), and some ``xhigh``.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["effort_for", "effort_of_budget", "reasons", "thinking_mode"]

_O_SERIES = re.compile(r"^(o\d)(\b|[-.])")
_GPT5 = re.compile(r"^gpt-5(?P<minor>\.\d+)?(\b|[-.])")
# gpt-5's chat snapshots answer without reasoning and refuse the reasoning fields.
_NOT_REASONING = re.compile(r"^gpt-5(\.\d+)?-chat")
_OPEN_WEIGHTS = re.compile(r"^gpt-oss")


def _bare(model: str) -> str:
    """The id without a ``vendor/`` prefix (a proxy may name ``openai/gpt-5``)."""
    return model.rsplit("/", 1)[-1].lower()


def reasons(model: str) -> bool:
    """Whether the model produces reasoning items (o-series, gpt-5 family, codex,
    gpt-oss), so the request asks for their encrypted content."""
    name = _bare(model)
    if _NOT_REASONING.match(name):
        return False
    return bool(
        _O_SERIES.match(name) or _GPT5.match(name) or "codex" in name or _OPEN_WEIGHTS.match(name)
    )


def thinking_mode(model: str) -> Literal["always", "optional"] | None:
    """``optional`` for gpt-5.1 and later (effort ``none`` turns reasoning off),
    ``always`` for the other reasoning models, None when the id says nothing."""
    if not reasons(model):
        return None
    gpt5 = _GPT5.match(_bare(model))
    return "optional" if gpt5 and gpt5.group("minor") else "always"


def effort_of_budget(budget: int | None) -> str | None:
    """The effort a thinking budget stands for: the Responses API takes an effort, not a
    budget. The steps are the budgets modelplug's efforts mean elsewhere (low 2,048,
    medium 8,192 tokens; modelplug-openai-compat's openai dialect maps the same way)."""
    if budget is None:
        return None
    return "low" if budget <= 2048 else "medium" if budget <= 8192 else "high"


def effort_for(model: str, effort: str | None, enabled: bool) -> str | None:
    """The ``reasoning.effort`` value for modelplug's effort (None: the model's default).

    ``enabled=False`` asks for the least reasoning the model allows; ``max`` is the
    highest level the family has.
    """
    name = _bare(model)
    gpt5 = _GPT5.match(name)
    later = bool(gpt5 and gpt5.group("minor"))  # gpt-5.1, gpt-5.2, ...
    if not enabled:
        if later:
            return "none"
        return "minimal" if gpt5 else "low" if _O_SERIES.match(name) else None
    if effort is None:
        return None
    if _O_SERIES.match(name):
        return {"minimal": "low", "xhigh": "high", "max": "high"}.get(effort, effort)
    if gpt5 and not later:
        return {"xhigh": "high", "max": "high"}.get(effort, effort)
    return "xhigh" if effort == "max" else effort
