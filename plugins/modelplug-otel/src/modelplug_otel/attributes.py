"""A call's attributes from modelplug's neutral types, under the conventions' names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from . import names

if TYPE_CHECKING:
    from modelplug.types import Cost, Request, Response, Route, Usage

# modelplug's stop reasons -> the finish reasons the conventions' examples use.
FINISH_REASON = {
    "end_turn": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}
DEFAULT_PORT = {"https": 443, "http": 80}


def provider_name(route: Route) -> str:
    """gen_ai.provider.name: the conventions' well-known value where one fits."""
    known = names.PROVIDER_BY_TYPE.get(route.endpoint.type)
    if known is not None:
        return known
    return names.PROVIDER_BY_NAME.get(route.provider, route.provider)


# route_attributes' answers by what they are made of: a route is resolved afresh for
# every call, but its attributes are the same each time, and parsing its base URL
# and building the dict again was a measurable part of a short call's cost.
_ROUTE_ATTRIBUTES: dict[tuple[str, str, str, str, str | None, str], dict[str, Any]] = {}
_MAX_CACHED = 4096


def route_attributes(route: Route, operation: str) -> dict[str, Any]:
    """What a call or an attempt on ``route`` is, before it is sent (a fresh dict: the
    caller may add to it)."""
    endpoint = route.endpoint
    key = (operation, route.name, route.provider, route.model, endpoint.base_url, endpoint.type)
    cached = _ROUTE_ATTRIBUTES.get(key)
    if cached is None:
        if len(_ROUTE_ATTRIBUTES) >= _MAX_CACHED:
            _ROUTE_ATTRIBUTES.clear()
        cached = _ROUTE_ATTRIBUTES[key] = _route_attributes(route, operation)
    return dict(cached)


def _route_attributes(route: Route, operation: str) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        names.OPERATION: operation,
        names.PROVIDER: provider_name(route),
        names.REQUEST_MODEL: route.model,
        names.ROUTE: route.name,
    }
    base_url = route.endpoint.base_url
    if base_url:
        parts = urlsplit(base_url)
        if parts.hostname:
            attributes[names.SERVER_ADDRESS] = parts.hostname
            port = parts.port or DEFAULT_PORT.get(parts.scheme)
            if port is not None:
                attributes[names.SERVER_PORT] = port
    return attributes


def request_attributes(request: Request) -> dict[str, Any]:
    """The request's sampling options, where the caller set them."""
    attributes: dict[str, Any] = {names.REQUEST_STREAM: True}
    if request.max_tokens is not None:
        attributes[names.REQUEST_MAX_TOKENS] = request.max_tokens
    if request.temperature is not None:
        attributes[names.REQUEST_TEMPERATURE] = request.temperature
    if request.top_p is not None:
        attributes[names.REQUEST_TOP_P] = request.top_p
    if request.top_k is not None:
        attributes[names.REQUEST_TOP_K] = request.top_k
    if request.seed is not None:
        attributes[names.REQUEST_SEED] = request.seed
    if request.stop:
        attributes[names.REQUEST_STOP] = list(request.stop)
    return attributes


def usage_attributes(usage: Usage) -> dict[str, Any]:
    """The conventions count cached tokens inside the input tokens; modelplug's
    ``Usage.input`` leaves them out, so they are added back, and also given beside."""
    attributes: dict[str, Any] = {
        names.INPUT_TOKENS: input_tokens(usage),
        names.OUTPUT_TOKENS: usage.output,
        names.USAGE_REPORTED: usage.reported,
    }
    if usage.cache_read:
        attributes[names.CACHE_READ] = usage.cache_read
    if usage.cache_write:
        attributes[names.CACHE_CREATION] = usage.cache_write
    if usage.reasoning:
        attributes[names.REASONING_TOKENS] = usage.reasoning
    return attributes


def input_tokens(usage: Usage) -> int:
    return usage.input + usage.cache_read + usage.cache_write


def response_model(response: Response, route: Route) -> str:
    """The model the server named in its answer: what the provider plugin recorded in
    ``metadata["served_model"]`` (only when it differs from the route's), else the
    model of the route that answered."""
    served = response.metadata.get("served_model")
    return served if isinstance(served, str) and served else route.model


def response_id(response: Response) -> str | None:
    for key in ("response_id", "id"):
        found = response.metadata.get(key)
        if isinstance(found, str) and found:
            return found
    return None


def response_attributes(response: Response, route: Route, cost: Cost | None) -> dict[str, Any]:
    """What the answer said: model, id, finish reason, usage, cost."""
    attributes = usage_attributes(response.usage)
    attributes[names.RESPONSE_MODEL] = response_model(response, route)
    attributes[names.FINISH_REASONS] = [
        FINISH_REASON.get(response.stop_reason, response.stop_reason)
    ]
    found = response_id(response)
    if found is not None:
        attributes[names.RESPONSE_ID] = found
    if cost is not None and cost.currency == "USD":
        attributes[names.COST] = float(cost.amount)
    return attributes
