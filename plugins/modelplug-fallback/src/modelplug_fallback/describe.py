"""``modelplug resolve``'s fallback section: the chain a call on a route would walk, what
in it cools down now, the retries, and where the cooldowns live."""

from __future__ import annotations

from inspect import isawaitable
from typing import TYPE_CHECKING, Any

from modelplug import ModelplugError
from modelplug_kit import MemoryCooldowns

from .chain import Candidates

if TYPE_CHECKING:
    from modelplug import CallContext, Route
    from modelplug_kit import AnyCooldownStore

    from .policy_protocol import AttemptsPolicy

__all__ = ["describe_route", "store_text"]


def store_text(store: AnyCooldownStore) -> str:
    """Where the cooldowns live and who shares them, for people."""
    if isinstance(store, MemoryCooldowns):
        return (
            "this process's memory: other processes do not see it "
            '([fallback] store = "sqlite" shares it on this machine)'
        )
    path = getattr(store, "path", None)
    if path is not None:
        return f"{path}, shared by this machine's processes"
    return f"{store!r}, shared by every process that uses it"


def chain_source(client: CallContext, route: Route) -> str | None:
    """The ``[fallbacks]`` key that gave ``route`` its chain (as chain_specs finds it)."""
    for key in (route.role, route.spec, route.name):
        if key and key in client.settings.fallbacks:
            return key
    return None


async def describe_route(
    policy: AttemptsPolicy, route: Route, client: CallContext
) -> dict[str, Any]:
    """The section for ``route`` as ``policy`` would treat a call there now."""
    options = policy.options_for(client)
    store = policy.store_for(client)
    candidates = Candidates(client, route)
    chain: list[dict[str, Any]] = []
    for index, spec in enumerate(candidates.specs):
        entry: dict[str, Any] = {"spec": spec}
        try:
            entry["model"] = candidates.route(index).name
        except ModelplugError as exc:
            entry["skipped"] = exc.message
            chain.append(entry)
            continue
        left = store.remaining(entry["model"])
        if isawaitable(left):
            left = await left
        entry["cooling"] = round(float(left), 1)
        chain.append(entry)
    lines = []
    source = chain_source(client, route)
    if source is None:
        lines.append(
            "chain: none (a failure is retried, then raised; [fallbacks] in your settings sets one)"
        )
    else:
        names = " -> ".join(e.get("model", e["spec"]) for e in chain)
        lines.append(f'chain: {names} (from [fallbacks] "{source}")')
    for index, entry in enumerate(chain):
        if "skipped" in entry:
            lines.append(f"would skip {entry['spec']}: {entry['skipped']}")
        elif entry["cooling"] > 0:
            also = ""
            if source is not None:
                also = (
                    ", so a call starts further down the chain"
                    if index == 0
                    else ", skipped while another candidate can answer"
                )
            lines.append(f"cooling down: {entry['model']} for {entry['cooling']:g} s more{also}")
    lines.append(
        f"retries: {options.retries} per model, waiting {options.backoff:g} s doubling to "
        f"{options.max_backoff:g} s, or what the server asks up to {options.max_retry_after:g} s"
    )
    lines.append(f"store: {type(store).__name__} ({store_text(store)})")
    return {
        "section": "fallback",
        "lines": lines,
        "chain": chain,
        "chain_from": source,
        "retries": options.retries,
        "store": type(store).__name__,
        "where": store_text(store),
    }
