"""A call's attributes from modelplug's neutral types, under the conventions' names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from . import names

if TYPE_CHECKING:
    from modelplug import Cost, Request, Response, Route, Usage

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


# The attributes a metric point carries (low cardinality: no ids, no tokens).
METRIC_KEYS = (
    names.OPERATION,
    names.PROVIDER,
    names.REQUEST_MODEL,
    names.SERVER_ADDRESS,
    names.SERVER_PORT,
)


class RouteFacts:
    """What every call of one operation on one route reports alike, made once: a route
    is resolved afresh for every call, but parsing its base URL and building these
    dicts again was a measurable part of a short call's cost. The dicts are handed to
    the SDK as they are (it copies what it keeps) and never changed."""

    __slots__ = ("attributes", "call", "input_tokens", "metric", "output_tokens", "span_name")

    def __init__(self, route: Route, operation: str) -> None:
        self.span_name = f"{operation} {route.model}"
        self.attributes = _route_attributes(route, operation)
        # A call's span at its start, when the request sets no sampling option.
        self.call: dict[str, Any] = {**self.attributes, names.REQUEST_STREAM: True}
        attributes = self.attributes
        self.metric = {k: attributes[k] for k in METRIC_KEYS if k in attributes}
        self.input_tokens = {**self.metric, names.TOKEN_TYPE: "input"}
        self.output_tokens = {**self.metric, names.TOKEN_TYPE: "output"}


_FACTS: dict[tuple[str, str, str, str | None, str], RouteFacts] = {}
_MAX_CACHED = 4096


def route_facts(route: Route, operation: str) -> RouteFacts:
    endpoint = route.endpoint
    key = (operation, route.provider, route.model, endpoint.base_url, endpoint.type)
    found = _FACTS.get(key)
    if found is None:
        if len(_FACTS) >= _MAX_CACHED:
            _FACTS.clear()
        found = _FACTS[key] = RouteFacts(route, operation)
    return found


def route_attributes(route: Route, operation: str) -> dict[str, Any]:
    """What a call or an attempt on ``route`` is, before it is sent (a fresh dict: the
    caller may add to it)."""
    return dict(route_facts(route, operation).attributes)


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


def request_attributes(request: Request) -> dict[str, Any] | None:
    """The request's sampling options, where the caller set them (None: it set none)."""
    max_tokens, temperature, top_p = request.max_tokens, request.temperature, request.top_p
    top_k, seed, stop = request.top_k, request.seed, request.stop
    if (
        max_tokens is None
        and temperature is None
        and top_p is None
        and top_k is None
        and seed is None
        and not stop
    ):
        return None
    attributes: dict[str, Any] = {}
    if max_tokens is not None:
        attributes[names.REQUEST_MAX_TOKENS] = max_tokens
    if temperature is not None:
        attributes[names.REQUEST_TEMPERATURE] = temperature
    if top_p is not None:
        attributes[names.REQUEST_TOP_P] = top_p
    if top_k is not None:
        attributes[names.REQUEST_TOP_K] = top_k
    if seed is not None:
        attributes[names.REQUEST_SEED] = seed
    if stop:
        attributes[names.REQUEST_STOP] = list(stop)
    return attributes


def usage_attributes(usage: Usage) -> dict[str, Any]:
    """The conventions count cached tokens inside the input tokens; modelplug's
    ``Usage.input`` leaves them out, so they are added back, and also given beside."""
    cache_read, cache_write = usage.cache_read, usage.cache_write
    attributes: dict[str, Any] = {
        names.INPUT_TOKENS: usage.input + cache_read + cache_write,
        names.OUTPUT_TOKENS: usage.output,
        names.USAGE_REPORTED: usage.reported,
    }
    if cache_read:
        attributes[names.CACHE_READ] = cache_read
    if cache_write:
        attributes[names.CACHE_CREATION] = cache_write
    if usage.reasoning:
        attributes[names.REASONING_TOKENS] = usage.reasoning
    return attributes


def input_tokens(usage: Usage) -> int:
    return usage.input + usage.cache_read + usage.cache_write


def response_model(response: Response, route: Route) -> str:
    """The model the server named in its answer: what the provider plugin recorded in
    ``metadata["served_model"]`` (only when it differs from the route's), else the
    model of the route that answered."""
    metadata = response.metadata
    served = metadata.get("served_model") if metadata else None
    return served if isinstance(served, str) and served else route.model


def response_id(response: Response) -> str | None:
    metadata = response.metadata
    if not metadata:
        return None
    for key in ("response_id", "id"):
        found = metadata.get(key)
        if isinstance(found, str) and found:
            return found
    return None


def response_attributes(response: Response, route: Route, cost: Cost | None) -> dict[str, Any]:
    """What the answer said: model, id, finish reason, usage, cost."""
    attributes = usage_attributes(response.usage)
    attributes[names.RESPONSE_MODEL] = response_model(response, route)
    stop_reason = response.stop_reason
    attributes[names.FINISH_REASONS] = [FINISH_REASON.get(stop_reason, stop_reason)]
    found = response_id(response)
    if found is not None:
        attributes[names.RESPONSE_ID] = found
    if cost is not None and cost.currency == "USD":
        attributes[names.COST] = float(cost.amount)
    return attributes
