"""A key's budget read from its endpoint through ``modelplug_key_budget`` (seed 004).

The first call for a base URL and key probes (the plugin tries each budget endpoint it
knows, each with a short bounded timeout) and the answer is remembered for the client's
life: which source answered, or that none did. Later calls ask that one source in one
request, or answer :class:`~modelplug.NoKeyBudgetError` without a request. A failure
to reach the endpoint (unreachable, a timeout, a 5xx, a refused key) is raised and not
remembered, so an endpoint that was down is probed again next time.

The memory is keyed by the base URL and a fingerprint of the key (a hash, cut short),
never the key itself.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from modelplug.contract.errors import ModelplugError, NoKeyBudgetError

if TYPE_CHECKING:
    from modelplug.contract.context import CallContext
    from modelplug.contract.hook_types import HookRelay
    from modelplug.contract.routes import Route
    from modelplug.contract.types import KeyBudget

__all__ = ["BudgetSources", "key_fingerprint", "read_key_budget"]

# What the memory holds for an endpoint that exposes no key budget.
_NONE = ""


def key_fingerprint(key: str | None) -> str:
    """A short hash that tells keys apart without holding one ("" for no key)."""
    if not key:
        return ""
    import hashlib  # here: it loads OpenSSL, and a Client() need not

    return hashlib.sha256(key.encode()).hexdigest()[:16]


class BudgetSources:
    """Per base URL and key fingerprint: the source that answered, or ``""`` (none)."""

    def __init__(self) -> None:
        self._known: dict[str, str] = {}

    @staticmethod
    def key(route: Route, api_key: str | None) -> str:
        return json.dumps([route.endpoint.base_url or route.provider, key_fingerprint(api_key)])

    def get(self, key: str) -> str | None:
        return self._known.get(key)

    def set(self, key: str, source: str) -> None:
        self._known[key] = source


async def read_key_budget(
    hook: HookRelay, client: CallContext, route: Route, known: BudgetSources
) -> KeyBudget:
    """The key budget of ``route``'s endpoint; see the module for what is remembered."""
    api_key = client.settings.api_key(route.endpoint.api_key_env, route.provider, required=False)
    memory = BudgetSources.key(route, api_key)
    source = known.get(memory)
    if source == _NONE:
        raise NoKeyBudgetError(route.name, route.endpoint.base_url)
    waiting = hook.modelplug_key_budget(route=route, client=client, source=source)
    if waiting is None:
        known.set(memory, _NONE)  # no plugin reads budgets for this provider type
        raise NoKeyBudgetError(route.name, route.endpoint.base_url)
    failure: ModelplugError | None = None
    try:
        budget = await waiting
    except ModelplugError as exc:
        failure = exc
    if failure is not None:
        # Raised here, not in the except block, so it does not chain the raw original.
        from modelplug.client.calls import clean_error

        raise clean_error(failure)
    if budget is None:
        known.set(memory, _NONE)
        raise NoKeyBudgetError(route.name, route.endpoint.base_url)
    known.set(memory, budget.source)
    return budget
