"""modelplug-router: model groups balanced across deployments.

A group (``[groups.NAME]``) is one model name for several deployments: two regions, a
local server beside a hosted endpoint, two keys of one vendor. Its name resolves
wherever a spec does (this plugin's ``modelplug_resolve`` answers it with a route of
type ``group``), and each call on it picks one deployment by the group's strategy. The
policy lives in :mod:`modelplug_router.policy`, imported on the first call on a group.

Public names (loaded on first use): :class:`RouterPolicy` (register your own to give it
a store, a clock or a seeded random source).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import AsyncIterator, Awaitable, Generator
from typing import TYPE_CHECKING, Any

from modelplug import find_policies, hookimpl

if TYPE_CHECKING:
    from modelplug import (
        CallContext,
        Embeddings,
        EmbedRequest,
        Event,
        Request,
        Route,
        Settings,
        TranscribeRequest,
        Transcript,
    )

    from .policy import RouterPolicy

__version__ = "2.0.0.dev0"
__all__ = [
    "RouterPolicy",
    "modelplug_close",
    "modelplug_describe_route",
    "modelplug_embed",
    "modelplug_resolve",
    "modelplug_stream",
    "modelplug_transcribe",
]

modelplug_policy = "router"
"""This module is a router policy (see :func:`modelplug.find_policies`)."""

modelplug_sections = ("groups",)
"""The settings tables this plugin reads beyond ``[router]``: core does not warn of them."""

GROUP_TYPE = "group"


def __getattr__(name: str) -> Any:
    if name != "RouterPolicy":
        raise AttributeError(f"module 'modelplug_router' has no attribute {name!r}")
    value = importlib.import_module(f"{__name__}.policy").RouterPolicy
    globals()[name] = value
    return value


@hookimpl(tryfirst=True)
def modelplug_resolve(spec: str, settings: Settings) -> Route | None:
    """A group's name (or ``group/NAME``) as a route of type ``group``: ``provider``
    ``group``, ``model`` the group's name. Any other spec: None, with one dict lookup."""
    groups = settings.options.get("groups")
    if not groups or spec.removeprefix("group/") not in groups:
        return None
    from .groups import group_route

    return group_route(settings, spec)


@hookimpl(wrapper=True)
def modelplug_stream(
    route: Route, request: Request, client: CallContext
) -> Generator[None, AsyncIterator[Event] | None, AsyncIterator[Event] | None]:
    """A call on a group: pick a deployment, hand a failed one over (see the README).
    Every other route passes through untouched. A program's own RouterPolicy applies
    instead when it registered one."""
    if route.endpoint.type != GROUP_TYPE or own_policy(client):
        return (yield)
    from .policy import default_policy

    return (yield from default_policy().wrapper(route, request, client))


@hookimpl(wrapper=True)
def modelplug_embed(
    route: Route, request: EmbedRequest, client: CallContext
) -> Generator[None, Awaitable[Embeddings] | None, Awaitable[Embeddings] | None]:
    """An embedding call on a group: a deployment picked, a failed one handed over, as
    for a stream. Every other route passes through untouched."""
    if route.endpoint.type != GROUP_TYPE or own_policy(client):
        return (yield)
    from .policy import default_policy

    return (yield from default_policy().embed_wrapper(route, request, client))


@hookimpl(wrapper=True)
def modelplug_transcribe(
    route: Route, request: TranscribeRequest, client: CallContext
) -> Generator[None, Awaitable[Transcript] | None, Awaitable[Transcript] | None]:
    """A transcription on a group, as an embedding call. Every other route passes
    through untouched."""
    if route.endpoint.type != GROUP_TYPE or own_policy(client):
        return (yield)
    from .policy import default_policy

    return (yield from default_policy().transcribe_wrapper(route, request, client))


@hookimpl
def modelplug_describe_route(route: Route, client: CallContext) -> Awaitable[dict[str, Any]] | None:
    """For ``modelplug resolve GROUP``: each deployment, its state and the store."""
    if route.endpoint.type != GROUP_TYPE or own_policy(client):
        return None
    from .policy import default_policy

    return default_policy().modelplug_describe_route(route, client)


@hookimpl
def modelplug_close(client: CallContext) -> None:
    """Close the connections to the SQLite state file this process holds for
    ``client`` (opened again by the next call on a group)."""
    stores = sys.modules.get(f"{__name__}.stores")
    if stores is not None:  # never imported: no call on a group ran
        stores.close_sqlite_state(client)


def own_policy(client: CallContext) -> bool:
    """Whether a program registered a RouterPolicy object of its own on ``client``."""
    return any(not isinstance(p, type(sys)) for p in find_policies(client, modelplug_policy))
