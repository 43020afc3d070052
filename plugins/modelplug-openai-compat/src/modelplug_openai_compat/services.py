"""The hosted services' own rules for a Chat Completions body: fields a service names its
own way, and fields it refuses or ignores, left out with a Notice that says so.

The rules go by the endpoint's server (``Endpoint.server``: a preset's own name, or
``server = "..."`` in your ``[providers.NAME]``). They apply to the fields built from
the neutral Request; what a caller passes through ``Request.extra`` goes as given.
A model whose ``reasoning_dialect`` is set in your settings keeps the reasoning fields
that dialect sends: you said what it takes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from modelplug import Notice, Route

__all__ = ["REASONING_EFFORTS", "fit_to_service", "mistral_call_id", "nearest_effort"]

# The reasoning_effort values each service's models take, by a fragment of the model id,
# first match wins; a model that matches none takes no reasoning_effort at all.
# xAI: grok-3-mini takes low | high; grok-4 and grok-4.20 refuse the field (400 "Model
# does not support parameter reasoningEffort"), their reasoning is fixed by the model;
# grok-4.3 takes none | low | medium | high, grok-4.5 low | medium | high.
# Groq: gpt-oss takes low | medium | high; Qwen3 none | default; other models none.
REASONING_EFFORTS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "xai": (
        ("grok-3-mini", ("low", "high")),
        ("grok-4.3", ("none", "low", "medium", "high")),
        ("grok-4.5", ("low", "medium", "high")),
    ),
    "groq": (
        ("gpt-oss", ("low", "medium", "high")),
        ("qwen3", ("none", "default")),
    ),
}
# The order efforts are compared in, for the nearest one a model takes.
LEVELS = ("none", "minimal", "low", "medium", "high")
# Mistral takes tool-call ids of 9 letters and digits only (mistral-common's validator:
# "must be a-z, A-Z, 0-9, with a length of 9"); a call another provider made is renamed.
MISTRAL_CALL_ID = re.compile(r"[A-Za-z0-9]{9}")
# xAI's reasoning models refuse stop (and presence/frequency penalties).
XAI_REASONING = ("grok-3-mini", "grok-4", "grok-code")


@dataclass
class Fit:
    """One body being fitted to its service, and what was left out of it and why."""

    body: dict[str, Any]
    route: Route
    dropped: dict[str, str] = field(default_factory=dict)

    @property
    def model(self) -> str:
        return self.route.model.lower()

    def drop(self, name: str, why: str) -> None:
        if name in self.body:
            del self.body[name]
            self.dropped[name] = why

    def rename(self, old: str, new: str) -> None:
        if old in self.body:
            self.body[new] = self.body.pop(old)


def _mistral(fit: Fit) -> None:
    # Mistral calls "a tool must be called" "any", and the seed random_seed.
    if fit.body.get("tool_choice") == "required":
        fit.body["tool_choice"] = "any"
    fit.rename("seed", "random_seed")
    _mistral_call_ids(fit.body.get("messages"))
    # Mistral refuses any field it does not know (422 "extra_forbidden", as users of
    # several OpenAI clients reported for stream_options.include_usage); its last chunk
    # carries the usage unasked.
    fit.body.pop("stream_options", None)
    fit.drop("top_k", "Mistral's API has no top_k (it refuses unknown fields with a 422)")


def _mistral_call_ids(messages: Any) -> None:
    """Tool-call ids Mistral refuses, renamed alike in the call and in its result."""
    for message in messages if isinstance(messages, list) else []:
        for call in message.get("tool_calls") or []:
            call["id"] = mistral_call_id(call.get("id"))
        if message.get("role") == "tool":
            message["tool_call_id"] = mistral_call_id(message.get("tool_call_id"))


def mistral_call_id(value: Any) -> str:
    """``value`` if Mistral takes it as a tool-call id, else 9 hex digits of its hash (the
    same id always gives the same name, so a call and its result still pair up)."""
    if isinstance(value, str) and MISTRAL_CALL_ID.fullmatch(value):
        return value
    return hashlib.sha256(str(value).encode()).hexdigest()[:9]


def _deepseek(fit: Fit) -> None:
    fit.drop("top_k", "DeepSeek's API has no top_k")
    if _deepseek_thinks(fit):
        for name in ("temperature", "top_p"):
            fit.drop(name, "DeepSeek's thinking mode ignores it (its thinking-mode guide)")


def _deepseek_thinks(fit: Fit) -> bool:
    """Whether the call runs in DeepSeek's thinking mode: asked for, deepseek-reasoner,
    or a V4 model (deepseek-v4-*, deepseek-flash, deepseek-pro) not told otherwise."""
    thinking = fit.body.get("thinking")
    asked = thinking.get("type") if isinstance(thinking, dict) else None
    if asked is not None:
        return bool(asked == "enabled")
    v4 = "deepseek-v4" in fit.model or fit.model.startswith(("deepseek-flash", "deepseek-pro"))
    return v4 or fit.model == "deepseek-reasoner"


def _xai(fit: Fit) -> None:
    if fit.model.startswith(XAI_REASONING) and "non-reasoning" not in fit.model:
        fit.drop("stop", f"xAI's reasoning models ({fit.route.model}) refuse stop sequences")
    _fit_effort(fit)


def _perplexity(fit: Fit) -> None:
    for name in ("tools", "tool_choice"):
        fit.drop(name, "Perplexity's Sonar API has no function calling")


def _fit_effort(fit: Fit) -> None:
    """``reasoning_effort`` as the model takes it: the nearest value it takes, or left
    out (with ``reasoning_format``) when the model takes none or always reasons."""
    effort = fit.body.get("reasoning_effort")
    table = REASONING_EFFORTS.get(fit.route.endpoint.server or "")
    if not isinstance(effort, str) or table is None or fit.route.info.reasoning_dialect:
        return
    allowed = next((values for part, values in table if part in fit.model), None)
    if allowed is None:
        takers = ", ".join(part for part, _ in table)
        why = (
            f"{fit.route.provider}'s {fit.route.model} takes no reasoning_effort (models "
            f"that do: {takers}); set reasoning_dialect under "
            f'[models."{fit.route.name}"] if it does'
        )
    elif effort in allowed:
        return
    elif effort == "none":
        why = f"{fit.route.model} always reasons (it takes {' | '.join(allowed)})"
    else:
        fit.body["reasoning_effort"] = nearest_effort(effort, allowed)
        return
    fit.drop("reasoning_effort", why)
    fit.drop("reasoning_format", why)


def nearest_effort(effort: str, allowed: tuple[str, ...]) -> str:
    """The value of ``allowed`` nearest ``effort`` in :data:`LEVELS` (the lower on a tie)."""
    ranked = [v for v in allowed if v in LEVELS]
    if effort not in LEVELS or not ranked:
        return allowed[0]
    at = LEVELS.index(effort)
    return min(ranked, key=lambda v: (abs(LEVELS.index(v) - at), LEVELS.index(v)))


RULES: dict[str, Callable[[Fit], None]] = {
    "mistral": _mistral,
    "deepseek": _deepseek,
    "xai": _xai,
    "groq": _fit_effort,
    "perplexity": _perplexity,
}


def fit_to_service(body: dict[str, Any], route: Route) -> Notice | None:
    """Fit ``body`` (in place) to the service ``route`` goes to; the Notice naming the
    fields left out and why, or None when nothing was."""
    rule = RULES.get(route.endpoint.server or "")
    if rule is None:
        return None
    fit = Fit(body, route)
    rule(fit)
    if not fit.dropped:
        return None
    reasons = "; ".join(f"{name}: {why}" for name, why in fit.dropped.items())
    return Notice(
        kind="unsupported_fields",
        message=f"{route.name} takes no {', '.join(fit.dropped)}; left out of the request "
        f"({reasons})",
        details={"route": route.name, "fields": dict(fit.dropped)},
    )
