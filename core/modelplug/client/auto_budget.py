"""``reasoning_budget = "auto"``: a call's thinking budget sized from the route's window
(:func:`modelplug.contract.budget.reasoning_budget`) before it is sent.

The window must be one the server or the user stated: a probe's, the settings', or the
figure a provider plugin documents for a hosted model. A plugin's default for a local
server is a guess at how the server was started (``llama-server -c``), and a budget
sized from a guess is no budget at all. The prompt is counted by the route's server
(``modelplug_count_tokens``). When either is missing no budget is sent, thinking goes
as asked, and a Notice says why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug.contract.budget import DEFAULT_REASONING_RESERVE, reasoning_budget
from modelplug.contract.types import Notice, Request, ThinkingRequest

if TYPE_CHECKING:
    from modelplug.client.surface import ClientSurface
    from modelplug.contract.routes import Route

__all__ = ["NOTICE_KIND", "auto_budget", "known_window", "wants_auto_budget"]

NOTICE_KIND = "thinking_budget"
# Who may give the window an "auto" budget is sized from (ModelInfo.context_window_source).
STATED = {"settings", "probe"}


def known_window(route: Route) -> int | None:
    """The route's context window when the server or the user stated it (see the
    module); None for a plugin's guess at a local server."""
    info = route.info
    if info.context_window is None:
        return None
    if info.context_window_source in STATED or not route.endpoint.local:
        return info.context_window
    return None


def wants_auto_budget(request: Request, setting: str | None) -> bool:
    """Whether an ``"auto"`` budget applies: asked for on the call, or in the settings
    for a call that asks for thinking with no budget and no effort of its own."""
    thinking = request.thinking
    if thinking is not None and (
        not thinking.enabled or thinking.budget_tokens is not None or thinking.effort is not None
    ):
        return False
    if request.reasoning_budget == "auto":
        return True
    return thinking is not None and setting == "auto"


async def auto_budget(
    client: ClientSurface, route: Route, request: Request
) -> tuple[Request, Notice | None]:
    """``request`` with ``thinking.budget_tokens`` sized from the window, or as it was
    with a Notice saying why no budget could be sized; as it was, with no Notice, when
    no ``"auto"`` budget applies (:func:`wants_auto_budget`)."""
    settings = client.settings
    if not wants_auto_budget(request, settings.reasoning_budget):
        return request, None
    reserve = request.reasoning_reserve
    if reserve is None:
        reserve = settings.reasoning_reserve
    if reserve is None:
        reserve = DEFAULT_REASONING_RESERVE
    window = known_window(route)
    counted = await client.acount_prompt(route, request) if window is not None else None
    cap = request.max_tokens or route.info.max_output_tokens
    budget = reasoning_budget(window, counted, reserve, output_cap=cap)
    if budget is None:
        return request, Notice(
            kind=NOTICE_KIND,
            message=_why_none(route, window, counted, reserve),
            details={"window": window, "prompt_tokens": counted, "reserve": reserve},
        )
    thinking = (request.thinking or ThinkingRequest()).model_copy(update={"budget_tokens": budget})
    return request.model_copy(update={"thinking": thinking}), None


def _why_none(route: Route, window: int | None, counted: int | None, reserve: int) -> str:
    name = route.name
    if window is None:
        return (
            f"no thinking budget sent: {name}'s context window is not known (set "
            f'context_window under [models."{name}"] or run `modelplug resolve --probe '
            f"{name}`), so thinking goes unbudgeted"
        )
    if counted is None:
        return (
            f"no thinking budget sent: {name}'s endpoint cannot count the prompt, so "
            "what is left of the window is unknown and thinking goes unbudgeted"
        )
    return (
        f"no thinking budget sent: the prompt ({counted:,} tokens) and the reserve for the "
        f"answer ({reserve:,}) leave nothing of {name}'s context window of {window:,} "
        "tokens (or of the output limit)"
    )
