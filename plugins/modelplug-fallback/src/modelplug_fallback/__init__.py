"""modelplug-fallback: retries, fallback chains and cooldowns for every provider.

The hook wraps whatever stream the provider plugin opened (``wrapper=True``). The
policy itself lives in :mod:`modelplug_fallback.policy`, imported on the first call.

Public names (loaded on first use): :class:`FallbackPolicy`, :class:`SqliteCooldowns`
(the default store: this machine's processes share it) and :data:`SHARED` (this
process's table). The protocols a cooldown store implements (``CooldownStore``,
``AsyncCooldownStore``, as modelplug-redis does) and ``MemoryCooldowns`` are the kit's:
``from modelplug_kit import CooldownStore``.
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

    from .cooldowns import SHARED
    from .policy import FallbackPolicy
    from .sqlite_cooldowns import SqliteCooldowns

__version__ = "2.0.0.dev0"
__all__ = [
    "SHARED",
    "FallbackPolicy",
    "SqliteCooldowns",
    "modelplug_cli_commands",
    "modelplug_describe_route",
    "modelplug_embed",
    "modelplug_stream",
    "modelplug_transcribe",
]

modelplug_policy = "fallback"
"""This module is a fallback policy (see :func:`modelplug.find_policies`)."""

_WHERE = {
    "FallbackPolicy": "policy",
    "SHARED": "cooldowns",
    "SqliteCooldowns": "sqlite_cooldowns",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'modelplug_fallback' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


@hookimpl(wrapper=True, tryfirst=True)
def modelplug_stream(
    route: Route, request: Request, client: CallContext
) -> Generator[None, AsyncIterator[Event] | None, AsyncIterator[Event] | None]:
    """Retry, fall back and cool down around the provider's stream (see the README).

    When a program registered its own FallbackPolicy on the client, that one applies
    and this default one steps aside, so two policies never wrap the same call.
    ``tryfirst`` keeps this policy outside every other wrapper (modelplug-limits'
    included), so each attempt it makes passes through them again.
    """
    from .policy import FallbackPolicy, default_policy

    if any(isinstance(p, FallbackPolicy) for p in find_policies(client, modelplug_policy)):
        return (yield)
    return (yield from default_policy().wrapper(route, request, client))


@hookimpl(wrapper=True, tryfirst=True)
def modelplug_embed(
    route: Route, request: EmbedRequest, client: CallContext
) -> Generator[None, Awaitable[Embeddings] | None, Awaitable[Embeddings] | None]:
    """Retry, fall back and cool down around the provider's embedding call, as around
    a stream that failed before any output. A program's own FallbackPolicy applies
    instead when it registered one."""
    from .policy import FallbackPolicy, default_policy

    if any(isinstance(p, FallbackPolicy) for p in find_policies(client, modelplug_policy)):
        return (yield)
    return (yield from default_policy().embed_wrapper(route, request, client))


@hookimpl(wrapper=True, tryfirst=True)
def modelplug_transcribe(
    route: Route, request: TranscribeRequest, client: CallContext
) -> Generator[None, Awaitable[Transcript] | None, Awaitable[Transcript] | None]:
    """Retry, fall back and cool down around the provider's transcription call, as
    around an embedding call. A program's own FallbackPolicy applies instead."""
    from .policy import FallbackPolicy, default_policy

    if any(isinstance(p, FallbackPolicy) for p in find_policies(client, modelplug_policy)):
        return (yield)
    return (yield from default_policy().transcribe_wrapper(route, request, client))


@hookimpl
def modelplug_close(client: CallContext) -> None:
    """Close the connections to the SQLite cooldowns file this process holds for
    ``client`` (opened again by the next call that meets a cooldown)."""
    policy = sys.modules.get(f"{__name__}.policy")
    if policy is not None:  # never imported: no call ran, no file was opened
        policy.close_sqlite_cooldowns(client)


@hookimpl
def modelplug_cli_commands(
    subparsers: argparse._SubParsersAction[Any], client: CallContext
) -> None:
    """``modelplug cooldowns``: what cools down in the store the processes share, and
    ``modelplug cooldowns clear [ROUTE]``."""
    from .cli import add_commands

    add_commands(subparsers)


@hookimpl
def modelplug_describe_route(route: Route, client: CallContext) -> Awaitable[dict[str, Any]] | None:
    """For ``modelplug resolve``: the fallback chain a call on ``route`` would walk, what
    in it is cooling down now, the retries, and where the cooldowns live. A program's
    own FallbackPolicy answers for itself; this default one then steps aside."""
    from .policy import FallbackPolicy, default_policy

    if any(isinstance(p, FallbackPolicy) for p in find_policies(client, modelplug_policy)):
        return None
    return default_policy().modelplug_describe_route(route, client)
