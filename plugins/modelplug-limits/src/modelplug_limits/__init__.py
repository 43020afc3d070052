"""modelplug-limits: rate pacing and budgets around every attempt of every call.

A policy plugin: a ``wrapper=True`` implementation of ``modelplug_stream`` that runs
innermost (``trylast``), so the fallback policy's retries and fallbacks, which re-open
the stream through it, each reserve again. The policy lives in
:mod:`modelplug_limits.policy`, imported on the first call.

Public names (loaded on first use): :class:`LimitsPolicy`, :class:`BudgetExceededError`
and :class:`UnknownPriceError`, :class:`SqliteCounters` (the default store: this
machine's processes share it). The store protocol modelplug-redis implements
(``CounterStore``), its records (``Charge``, ``Outcome``, ``Setting``) and
``MemoryCounters`` are the kit's: ``from modelplug_kit import CounterStore``.

For other plugins that count beside the limits (modelplug-gateway's per-key budgets):
:func:`counter_store_for` (the store ``[limits] store`` names for a client),
:func:`input_tokens` (the estimate of what a request sends that a reservation counts)
and :func:`default_max_tokens` (``[limits] default_max_tokens``). Money in nano-units
and the calendar periods budgets count in are the kit's (``to_nano``, ``period_window``).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import AsyncIterator, Awaitable, Generator
from typing import TYPE_CHECKING, Any

from modelplug import find_policies, hookimpl

if TYPE_CHECKING:
    import argparse

    from modelplug import (
        CallContext,
        Embeddings,
        EmbedRequest,
        Event,
        Request,
        Route,
        TranscribeRequest,
        Transcript,
    )

    from .errors import BudgetExceededError, UnknownPriceError
    from .plan import input_tokens
    from .policy import LimitsPolicy
    from .shared import counter_store_for, default_max_tokens
    from .sqlite_store import SqliteCounters

__version__ = "2.0.0.dev0"
__all__ = [
    "BudgetExceededError",
    "LimitsPolicy",
    "SqliteCounters",
    "UnknownPriceError",
    "counter_store_for",
    "default_max_tokens",
    "input_tokens",
    "modelplug_cli_commands",
    "modelplug_describe_route",
    "modelplug_embed",
    "modelplug_stream",
    "modelplug_transcribe",
]

modelplug_policy = "limits"
"""This module is a limits policy (see :func:`modelplug.find_policies`)."""

_WHERE = {
    "LimitsPolicy": "policy",
    "BudgetExceededError": "errors",
    "UnknownPriceError": "errors",
    "SqliteCounters": "sqlite_store",
    "counter_store_for": "shared",
    "default_max_tokens": "shared",
    "input_tokens": "plan",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'modelplug_limits' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


@hookimpl(wrapper=True, trylast=True)
def modelplug_stream(
    route: Route, request: Request, client: CallContext
) -> Generator[None, AsyncIterator[Event] | None, AsyncIterator[Event] | None]:
    """Reserve, wait or refuse before each attempt; settle after (see the README).

    A program that registered its own LimitsPolicy gets that one; this default steps
    aside, so no attempt is counted twice.
    """
    from .policy import LimitsPolicy, default_policy

    if any(isinstance(p, LimitsPolicy) for p in find_policies(client, modelplug_policy)):
        return (yield)
    return (yield from default_policy().wrapper(route, request, client))


@hookimpl(wrapper=True, trylast=True)
def modelplug_embed(
    route: Route, request: EmbedRequest, client: CallContext
) -> Generator[None, Awaitable[Embeddings] | None, Awaitable[Embeddings] | None]:
    """Reserve the inputs' estimate before each embedding attempt (waiting or refusing
    as for chat), settle with the usage and cost it reported. A program's own
    LimitsPolicy applies instead when it registered one."""
    from .policy import LimitsPolicy, default_policy

    if any(isinstance(p, LimitsPolicy) for p in find_policies(client, modelplug_policy)):
        return (yield)
    return (yield from default_policy().embed_wrapper(route, request, client))


@hookimpl(wrapper=True, trylast=True)
def modelplug_transcribe(
    route: Route, request: TranscribeRequest, client: CallContext
) -> Generator[None, Awaitable[Transcript] | None, Awaitable[Transcript] | None]:
    """Reserve one request and the transcript's estimate before each transcription
    attempt (waiting or refusing as for chat), settle with the usage and cost it
    reported. A program's own LimitsPolicy applies instead when it registered one."""
    from .policy import LimitsPolicy, default_policy

    if any(isinstance(p, LimitsPolicy) for p in find_policies(client, modelplug_policy)):
        return (yield)
    return (yield from default_policy().transcribe_wrapper(route, request, client))


@hookimpl
def modelplug_cli_commands(
    subparsers: argparse._SubParsersAction[Any], client: CallContext
) -> None:
    """``modelplug limits``: spend and remaining per budget, the current rate windows."""
    parser = subparsers.add_parser(
        "limits", help="budgets (spent, remaining, reset) and current rate windows"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")

    def run(args: argparse.Namespace, client: CallContext) -> int:
        from .cli import show_limits

        return show_limits(client, as_json=args.json)

    parser.set_defaults(handler=run)


@hookimpl
def modelplug_close(client: CallContext) -> None:
    """Close the connections to the SQLite counters file this process holds for
    ``client`` (its budgets and rate windows; opened again by the next call counted)."""
    stores = sys.modules.get(f"{__name__}.stores")
    if stores is not None:  # never imported: nothing was counted in a file
        stores.close_sqlite_counters(client)


@hookimpl
def modelplug_describe_route(route: Route, client: CallContext) -> Awaitable[dict[str, Any]] | None:
    """For ``modelplug resolve``: the budgets and rate limits that count a call on
    ``route``, what each has used now, the room its server reported, the store. A
    program's own LimitsPolicy answers for itself; this default one then steps aside."""
    from .policy import LimitsPolicy, default_policy

    if any(isinstance(p, LimitsPolicy) for p in find_policies(client, modelplug_policy)):
        return None
    return default_policy().modelplug_describe_route(route, client)
