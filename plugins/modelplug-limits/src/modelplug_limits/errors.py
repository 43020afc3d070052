"""The errors this plugin raises: a budget that cannot fit a call, a spend budget that
cannot count a call (its model's price is unknown), and a wait for rate-limit room that
would pass ``max_wait``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug import ErrorClass, ModelError

if TYPE_CHECKING:
    from modelplug import Route

__all__ = ["BudgetExceededError", "UnknownPriceError", "rate_limited"]


class BudgetExceededError(ModelError):
    """A call that would not fit a budget, refused before any byte was sent.

    A ModelError (so a ModelplugError) of kind ``quota`` that is never retried. It lets
    the fallback policy move on only when the budget is a model's own (``scope =
    "model:..."``): another model may fit; any other budget would refuse it too.

    :ivar budget: the budget's name (``[limits.budgets.NAME]``).
    :ivar measure: ``"spend"`` or ``"tokens"``.
    :ivar spent: what is counted in the current period, as text with its unit (None
        for an :class:`UnknownPriceError`: the budget was not read).
    :ivar limit: the budget's limit, as text with its unit.
    :ivar resets: when the period ends (ISO 8601, UTC), or None (per call, total).
    """

    def __init__(
        self,
        *,
        budget: str,
        measure: str,
        spent: str,
        limit: str,
        needs: str,
        resets: str | None,
        retry_after: float | None,
        own_model: bool,
        route: Route,
    ) -> None:
        self.budget = budget
        self.measure = measure
        self.spent: str | None = spent
        self.limit = limit
        self.resets = resets
        when = f"; it resets at {resets}" if resets else ""
        message = (
            f"budget {budget!r} ({measure}) would be exceeded: {spent} spent of {limit}, "
            f"and this call may take up to {needs}{when} ([limits.budgets.{budget}] "
            f"{measure} in your settings file sets the limit)"
        )
        error_class = ErrorClass(
            kind="quota",
            retryable=False,
            fallback=own_model,
            retry_after=retry_after if own_model else None,
            reason=f"budget {budget!r} exceeded",
        )
        super().__init__(message, error_class=error_class, route=route)


class UnknownPriceError(BudgetExceededError):
    """A spend budget applies to a call whose model has no price in the budget's
    currency, and ``[limits] unknown_price = "refuse"``: its cost could not be counted,
    so it is refused before any byte is sent. The message names what is unknown and
    the two settings that decide: a price for the model, or ``unknown_price =
    "tokens"``.

    A :class:`BudgetExceededError` (``measure = "spend"``, ``spent`` None: the budget
    was not read). It lets the fallback policy move on (another model may have a
    price), without a cooldown: nothing about this model changes by waiting.
    """

    def __init__(
        self,
        *,
        budget: str,
        limit: str,
        period: str,
        currency: str,
        priced_in: str | None,
        resets: str | None,
        route: Route,
    ) -> None:
        self.budget = budget
        self.measure = "spend"
        self.spent = None
        self.limit = limit
        self.resets = resets
        name = route.name
        if priced_in is None:
            unknown = f"the price of {name} is unknown (no settings or pricing plugin give one)"
            fix = (
                f'give {name} a price in your settings file ([models."{name}"] price = '
                "{ input = ..., output = ... } in USD per million tokens, 0 for a free local "
                "model)"
            )
        else:
            unknown = f"{name} is priced in {priced_in}, not {currency}"
            fix = f'count the budget in it ([limits.budgets.{budget}] currency = "{priced_in}")'
        message = (
            f"budget {budget!r} ({limit} {period}) cannot count a call to {name}: {unknown}. "
            f"To call it, {fix}, or count models of unknown price by their tokens only "
            '([limits] unknown_price = "tokens")'
        )
        error_class = ErrorClass(
            kind="quota",
            retryable=False,
            fallback=True,
            retry_after=0.0,
            reason=f"budget {budget!r} cannot count {name} (price unknown)",
        )
        ModelError.__init__(self, message, error_class=error_class, route=route)


def rate_limited(route: Route, what: str, wait: float, bound: float) -> ModelError:
    """Our own rate limit has no room for longer than ``max_wait``: a rate_limit error
    the fallback policy moves on from (not retried: waiting is what it refused)."""
    how_long = "never fits" if wait == float("inf") else f"has room in {wait:.1f} s"
    return ModelError(
        f"{what} {how_long}, longer than max_wait ({bound:g} s)",
        error_class=ErrorClass(
            kind="rate_limit",
            retryable=False,
            fallback=True,
            retry_after=None if wait == float("inf") else wait,
            reason="rate limit (modelplug-limits)",
        ),
        route=route,
    )
