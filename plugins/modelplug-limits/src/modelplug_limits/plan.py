"""What one attempt reserves: the charges, and how to settle them afterwards.

Every attempt (a retry, a fallback) gets its own plan: one request and its estimated
tokens (the input's estimate plus ``max_tokens``) in each rate window that applies,
the room a server's headers reported, and in each budget its maximum cost and tokens.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from modelplug import Usage, estimate_tokens
from modelplug_kit import PERIOD_WORDS, Charge, from_nano, period_window, to_nano

from .errors import BudgetExceededError, UnknownPriceError
from .options import Budget, LimitsOptions

if TYPE_CHECKING:
    from modelplug import CallContext, EmbedRequest, Request, Route, TranscribeRequest

__all__ = ["Plan", "input_tokens", "plan_attempt", "plan_embed", "plan_transcribe"]

WINDOW_GRACE = 1.0  # seconds a rate window's counter outlives the window
PERIOD_GRACE = 60.0  # the same for a budget period


@dataclass
class Plan:
    """The charges of one attempt, with what each is for."""

    route: Route
    tokens: int
    spend: int | None  # nano-units; None: the price is unknown
    charges: list[Charge] = field(default_factory=list)
    what: list[str] = field(default_factory=list)
    budgets: list[tuple[Budget, str, str | None] | None] = field(default_factory=list)
    token_charges: list[Charge] = field(default_factory=list)
    spend_charges: list[Charge] = field(default_factory=list)
    learned: tuple[str, str] = ("", "")
    windows: list[tuple[float, int]] = field(default_factory=list)  # (length, index)

    def stale(self, now: float) -> bool:
        """Whether a rate window this plan counted in has ended by ``now``: the round
        trip to the store took the reservation past a window's edge, and a request sent
        now would fall in the next window, which did not count it."""
        return any(int(now // length) != index for length, index in self.windows)

    def refund(self) -> list[Charge]:
        """The adjustments that undo this plan's charges (a countdown gets its room back)."""
        return [
            Charge(c.key, c.amount if c.kind == "countdown" else -c.amount) for c in self.charges
        ]

    def add(self, charge: Charge, what: str, budget: tuple[Budget, str, str | None] | None) -> None:
        self.charges.append(charge)
        self.what.append(what)
        self.budgets.append(budget)


def scope_key(budget: Budget, client: CallContext) -> str:
    if budget.scope != "project":
        return budget.scope
    directory = client.settings.project_dir
    if directory is None:
        return "project:-"
    digest = hashlib.sha256(str(directory.resolve()).encode()).hexdigest()[:10]
    return f"project:{directory.name}-{digest}"


def input_tokens(request: Request) -> int:
    """The estimate of what the request sends: its system prompt, its text blocks as
    they are and every other block (tool calls and results, images, vendor items) and
    the tools as JSON: a little more than the text, as an estimate should err."""
    chars = len(request.system or "") if isinstance(request.system, str | None) else 0
    others = []
    for message in request.messages:
        for block in message.content:
            text = getattr(block, "text", None)
            if block.type == "text" and isinstance(text, str):
                chars += len(text) + 8
            else:
                others.append(block)
    if others or request.tools or not isinstance(request.system, str | None):
        chars += len(request.model_dump_json(include={"tools"}))
        chars += sum(len(block.model_dump_json()) for block in others)
        if not isinstance(request.system, str | None):
            chars += len(request.model_dump_json(include={"system"}))
    return estimate_tokens(chars)


def key_name(route: Route) -> str:
    return route.endpoint.api_key_env or "-"


def plan_attempt(
    options: LimitsOptions, route: Route, request: Request, client: CallContext, now: float
) -> Plan:
    """The charges of one attempt on ``route``. Raises BudgetExceededError when a per-call
    budget cannot fit, or when a spend budget applies to a model of unknown price (and
    ``unknown_price = "refuse"``)."""
    max_out = request.max_tokens or route.info.max_output_tokens or options.default_max_tokens
    return _plan(options, route, input_tokens(request), max_out, client, now)


def plan_embed(
    options: LimitsOptions, route: Route, request: EmbedRequest, client: CallContext, now: float
) -> Plan:
    """The charges of one embedding attempt: its inputs' estimate, no output tokens."""
    # The same estimate as a chat's text, plus a little per input for its separators.
    chars = sum(len(text) + 8 for text in request.inputs)
    return _plan(options, route, estimate_tokens(chars), 0, client, now)


def plan_transcribe(
    options: LimitsOptions,
    route: Route,
    request: TranscribeRequest,
    client: CallContext,
    now: float,
) -> Plan:
    """The charges of one transcription attempt: its prompt's estimate in, the model's
    most output tokens out (the audio's length is not known before the server says,
    so the text it becomes is reserved as a chat's answer is, by its ceiling)."""
    sent = estimate_tokens(len(request.prompt or "") + 8)
    max_out = route.info.max_output_tokens or options.default_max_tokens
    return _plan(options, route, sent, max_out, client, now)


def _plan(
    options: LimitsOptions, route: Route, sent: int, max_out: int, client: CallContext, now: float
) -> Plan:
    tokens = sent + max_out
    budgets = [b for b in options.budgets if b.applies_to(route.name, route.role)]
    cost = None
    if any(b.spend is not None for b in budgets):
        cost = client.price(route, Usage(input=tokens - max_out, output=max_out))
    plan = Plan(route, tokens, None if cost is None else to_nano(cost.amount, up=True))
    for budget in budgets:
        _budget_charges(plan, budget, cost.currency if cost else None, client, options, now)
    _rate_charges(plan, options, now)
    return plan


def _budget_charges(
    plan: Plan,
    budget: Budget,
    currency: str | None,
    client: CallContext,
    options: LimitsOptions,
    now: float,
) -> None:
    period, left, resets = period_window(budget.period, now)
    base = f"budget:{budget.name}:{scope_key(budget, client)}"
    if budget.tokens is not None:
        _one_budget_charge(
            plan, budget, "tokens", plan.tokens, budget.tokens, base, period, left, resets
        )
    if budget.spend is None:
        return
    if plan.spend is None or currency != budget.currency:
        if options.unknown_price == "tokens":
            return  # counted by its token budgets only, never as zero spend
        raise UnknownPriceError(
            budget=budget.name,
            limit=f"{budget.spend} {budget.currency}",
            period=PERIOD_WORDS[budget.period],
            currency=budget.currency,
            priced_in=currency,
            resets=resets,
            route=plan.route,
        )
    _one_budget_charge(
        plan, budget, "spend", plan.spend, to_nano(budget.spend), base, period, left, resets
    )


def _one_budget_charge(
    plan: Plan,
    budget: Budget,
    measure: str,
    amount: int,
    limit: int,
    base: str,
    period: str,
    left: float,
    resets: str | None,
) -> None:
    if budget.period == "call":
        if amount > limit:
            raise budget_error(budget, measure, 0, limit, amount, None, plan.route, None)
        return
    refresh = budget.period == "total"
    charge = Charge(
        f"{base}:{measure}:{period}", amount, limit, left, refresh=refresh, grace=PERIOD_GRACE
    )
    plan.add(charge, f"budget {budget.name!r} ({measure})", (budget, measure, resets))
    (plan.spend_charges if measure == "spend" else plan.token_charges).append(charge)


def _rate_charges(plan: Plan, options: LimitsOptions, now: float) -> None:
    route = plan.route
    key = key_name(route)
    names = (route.name, route.provider, f"key:{key}")
    for rate in options.rates_for(names):
        window = int(now // rate.window)
        left = (window + 1) * rate.window - now
        plan.windows.append((rate.window, window))
        per = f"per {rate.window:g} s" if rate.window != 60 else "per minute"
        if rate.rpm is not None:
            charge = Charge(
                f"rate:{rate.name}:requests:{window}", 1, rate.rpm, left, grace=WINDOW_GRACE
            )
            plan.add(charge, f"the request rate of {rate.name} ({rate.rpm} {per})", None)
        if rate.tpm is not None:
            charge = Charge(
                f"rate:{rate.name}:tokens:{window}",
                plan.tokens,
                rate.tpm,
                left,
                grace=WINDOW_GRACE,
            )
            plan.add(charge, f"the token rate of {rate.name} ({rate.tpm} {per})", None)
            plan.token_charges.append(charge)
    # The room the server reported last (headers, a 429's Retry-After), when known.
    learned = f"learned:{route.name}@{key}"
    plan.learned = (f"{learned}:requests", f"{learned}:tokens")
    # Said in a refusal and a wait's Notice: the limit is the server's (a 429's Retry-After
    # or its rate-limit headers), not one of [limits].
    plan.add(
        Charge(plan.learned[0], 1, kind="countdown"),
        f"the request limit {route.name}'s server reported",
        None,
    )
    plan.add(
        Charge(plan.learned[1], plan.tokens, kind="countdown"),
        f"the token limit {route.name}'s server reported",
        None,
    )


def budget_error(
    budget: Budget,
    measure: str,
    spent: int,
    limit: int,
    needs: int,
    resets: str | None,
    route: Route,
    retry_after: float | None,
) -> BudgetExceededError:
    def shown(value: int) -> str:
        if measure == "spend":
            return f"{from_nano(value):f} {budget.currency}"
        return f"{value} tokens"

    return BudgetExceededError(
        budget=budget.name,
        measure=measure,
        spent=shown(spent),
        limit=shown(limit),
        needs=shown(needs),
        resets=resets,
        retry_after=retry_after,
        own_model=budget.scope.startswith("model:"),
        route=route,
    )
