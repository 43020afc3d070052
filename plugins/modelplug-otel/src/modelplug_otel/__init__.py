"""modelplug-otel: OpenTelemetry GenAI spans and metrics for every call.

A policy plugin: the ``wrapper=True`` implementation of ``modelplug_stream`` runs
outermost (``tryfirst``, registered after modelplug-fallback), so it sees the call once
and, through the fallback policy's re-opened streams, every later attempt. It reports
through the global OpenTelemetry providers (opentelemetry-api only): with no SDK
configured every span and instrument is a no-op. Nothing of OpenTelemetry is imported
until the first call.

Public names (loaded on first use): :func:`server_span` (the gateway's SERVER span,
parented by a request's ``traceparent``) and :func:`server_response` (the status it
answered, on that span).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Generator
from typing import TYPE_CHECKING, Any

from modelplug import hookimpl

if TYPE_CHECKING:
    from modelplug import CallContext, Embeddings, EmbedRequest, Event, Request, Route

    from .server import server_response, server_span

__version__ = "2.0.0.dev0"
__all__ = ["modelplug_embed", "modelplug_stream", "server_response", "server_span"]

modelplug_policy = "otel"
"""This module is an otel policy (see :func:`modelplug.find_policies`)."""


def __getattr__(name: str) -> Any:
    if name in ("server_span", "server_response"):
        from . import server

        found = getattr(server, name)
        globals()[name] = found
        return found
    raise AttributeError(f"module 'modelplug_otel' has no attribute {name!r}")


@hookimpl(wrapper=True, tryfirst=True)
def modelplug_stream(
    route: Route, request: Request, client: CallContext
) -> Generator[None, AsyncIterator[Event] | None, AsyncIterator[Event] | None]:
    """The call's CLIENT span and one child span per attempt (see the README)."""
    from .calls import wrapper

    return (yield from wrapper(route, request, client))


@hookimpl(wrapper=True, tryfirst=True)
def modelplug_embed(
    route: Route, request: EmbedRequest, client: CallContext
) -> Generator[None, Awaitable[Embeddings] | None, Awaitable[Embeddings] | None]:
    """The CLIENT span ``embeddings {model}`` around each embedding call."""
    from .embed import wrapper

    return (yield from wrapper(route, request, client))
