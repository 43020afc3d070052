"""modelplug-prices: what a call cost, from the genai-prices tables, and each model's
context window and max output.

Only the hook implementations live here. genai-prices (about 0.4 s to import) is loaded
by :mod:`modelplug_prices.table` on the first price or model-info call, never when the
plugin is imported, so ``modelplug plugins`` does not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug import hookimpl

if TYPE_CHECKING:
    from modelplug import Cost, ModelInfo, Route, Settings, Usage

__all__ = ["modelplug_model_info", "modelplug_price"]


@hookimpl
def modelplug_price(
    route: Route, usage: Usage, price_factor: float, settings: Settings
) -> Cost | None:
    """The cost from genai-prices' table; 0 for a local server; None for a model the
    table does not know. Core's settings price (user override, preset price) runs first."""
    from .pricing import local_cost, price_usage

    if route.endpoint.local:
        return local_cost(route)
    from .live import start_if_wanted

    start_if_wanted(settings)
    cost = price_usage(route.provider, route.model, usage, price_factor)
    if cost is None and route.endpoint.type != route.provider:
        # A provider the user named (``[providers.work] type = "anthropic"``) is priced
        # as the vendor its type names.
        cost = price_usage(route.endpoint.type, route.model, usage, price_factor)
    return cost


@hookimpl(trylast=True)
def modelplug_model_info(route: Route, settings: Settings) -> ModelInfo | None:
    """Context window and max output from genai-prices' model data and this plugin's own
    table. trylast: a provider's own catalog, which knows its server, answers first."""
    from .live import start_if_wanted
    from .windows import model_info

    start_if_wanted(settings)
    return model_info(route, settings)
