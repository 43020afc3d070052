"""A key's budget, read from the endpoint it is spent at (seed 004).

- LiteLLM proxy: ``GET /key/info`` (no ``?key=``: the calling key's own) answers
  ``{"key": ..., "info": {"spend", "max_budget", "budget_duration",
  "budget_reset_at", ...}}``, in US dollars (LiteLLM's budgets are USD).
- The modelplug gateway answers the same path in the same shape, for a virtual key,
  with ``"served_by": "modelplug-gateway"`` beside ``info``.
- OpenRouter: ``GET /api/v1/key`` answers ``{"data": {"usage", "limit",
  "limit_remaining", "limit_reset", ...}}`` in OpenRouter's credits, which are kept as
  ``"credits"``: the endpoint does not say dollars.
- LiteLLM on every answer: ``x-litellm-key-spend`` and ``x-litellm-key-max-budget``
  (read by :func:`budget_from_headers` onto the response's Usage).

Which paths are tried follows the route's server: OpenRouter's for ``openrouter``,
LiteLLM's for ``litellm``, none for a model server that has no keys of its own
(llama.cpp, vLLM, Ollama, LM Studio) or for OpenAI, and both, ``/key/info`` first, for
a server not named.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from modelplug import ErrorClass, KeyBudget, ModelError, Route
from modelplug_kit import StatusError

from .counting import NO_ENDPOINT
from .errors import ERRORS
from .http import HTTP, request_headers

if TYPE_CHECKING:
    from modelplug import CallContext

__all__ = [
    "KNOWN_TIMEOUT",
    "PROBE_TIMEOUT",
    "budget_from_headers",
    "key_budget",
    "read_key_info",
    "read_openrouter_key",
]

#: Seconds each probe may take before the endpoint counts as not answering: short, so
#: a first ``modelplug budget`` against a silent server ends soon.
PROBE_TIMEOUT = 5.0
#: Seconds the one request to a source that answered before may take.
KNOWN_TIMEOUT = 30.0
# The servers known to have no key budget endpoint at all.
_NO_BUDGET_SERVERS = frozenset({"llamacpp", "vllm", "ollama", "lmstudio", "openai"})


def _amount(value: Any) -> Decimal | None:
    """A decimal amount from a JSON number or a decimal string; None for anything else."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        amount = Decimal(str(value).strip())
    except (InvalidOperation, ValueError):
        return None
    return amount if amount.is_finite() else None


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _remaining(spend: Decimal | None, limit: Decimal | None) -> Decimal | None:
    return limit - spend if spend is not None and limit is not None else None


def read_key_info(data: Mapping[str, Any]) -> KeyBudget | None:
    """LiteLLM's (or the gateway's) ``/key/info`` answer; None when it is not one."""
    info = data.get("info")
    if not isinstance(info, Mapping) or "spend" not in info:
        return None
    spend, limit = _amount(info.get("spend")), _amount(info.get("max_budget"))
    gateway = data.get("served_by") == "modelplug-gateway"
    return KeyBudget(
        source="modelplug-gateway" if gateway else "litellm-key-info",
        spend=spend,
        limit=limit,
        remaining=_remaining(spend, limit),
        reset_at=_when(info.get("budget_reset_at")),
        interval=_text(info.get("budget_duration")),
        currency="USD",
    )


def read_openrouter_key(data: Mapping[str, Any]) -> KeyBudget | None:
    """OpenRouter's ``/api/v1/key`` answer; None when it is not one."""
    key = data.get("data")
    if not isinstance(key, Mapping) or "usage" not in key:
        return None
    spend, limit = _amount(key.get("usage")), _amount(key.get("limit"))
    remaining = _amount(key.get("limit_remaining"))
    return KeyBudget(
        source="openrouter",
        spend=spend,
        limit=limit,
        remaining=remaining if remaining is not None else _remaining(spend, limit),
        interval=_text(key.get("limit_reset")),
        currency="credits",
    )


def budget_from_headers(headers: Mapping[str, str]) -> KeyBudget | None:
    """The budget LiteLLM's response headers state; None when they state no spend."""
    lowered = {name.lower(): value for name, value in headers.items()}
    spend = _amount(lowered.get("x-litellm-key-spend"))
    if spend is None:
        return None
    limit = _amount(lowered.get("x-litellm-key-max-budget"))
    return KeyBudget(
        source="litellm-headers",
        spend=spend,
        limit=limit,
        remaining=_remaining(spend, limit),
        currency="USD",
    )


@dataclass(frozen=True)
class _Source:
    path: Callable[[str], str]
    read: Callable[[Mapping[str, Any]], KeyBudget | None]


def _root(base_url: str) -> str:
    base = base_url.rstrip("/")
    return base[:-3] if base.endswith("/v1") else base


def _openrouter_path(base_url: str) -> str:
    base = base_url.rstrip("/")
    return base + "/key" if base.endswith("/v1") else base + "/v1/key"


KEY_INFO = _Source(lambda base: _root(base) + "/key/info", read_key_info)
OPENROUTER = _Source(_openrouter_path, read_openrouter_key)
_BY_NAME = {"litellm-key-info": KEY_INFO, "modelplug-gateway": KEY_INFO, "openrouter": OPENROUTER}


def _probe_order(route: Route) -> list[_Source]:
    server = route.endpoint.server or ""
    if server == "openrouter":
        return [OPENROUTER]
    if server == "litellm":
        return [KEY_INFO]
    if server in _NO_BUDGET_SERVERS:
        return []
    return [KEY_INFO, OPENROUTER]


async def _ask(
    client: CallContext, route: Route, source: _Source, key: str | None, timeout: float
) -> KeyBudget | None:
    url = source.path(route.endpoint.base_url or "")
    headers = request_headers(route, key, client.settings, accept="application/json")
    asked: Awaitable[dict[str, Any]] = HTTP.call_json(client, route, url, headers=headers)
    try:
        data = await asyncio.wait_for(asked, timeout)
    except TimeoutError:
        raise ERRORS.make(
            f"{route.provider} did not answer its key budget request within {timeout:g} s",
            ErrorClass(kind="transient", retryable=True, reason="the budget request timed out"),
            route,
        ) from None
    except StatusError as exc:
        if exc.status_code in NO_ENDPOINT:
            return None
        raise
    except ModelError as exc:
        status = exc.error_class.status
        if status is not None and status < 400:
            return None  # it answered, with something that is not JSON: no budget here
        raise
    return source.read(data)


async def key_budget(route: Route, client: CallContext, source: str | None) -> KeyBudget | None:
    """The key budget of ``route``'s endpoint, or None when it exposes none (see the
    module); a failure to reach it raises this plugin's classified error."""
    key = client.settings.api_key(route.endpoint.api_key_env, route.provider, required=False)
    known = _BY_NAME.get(source or "")
    if known is not None:
        return await _ask(client, route, known, key, KNOWN_TIMEOUT)
    for probe in _probe_order(route):
        budget = await _ask(client, route, probe, key, PROBE_TIMEOUT)
        if budget is not None:
            return budget
    return None
