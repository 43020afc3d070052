"""Running one call: the request checked, the provider's stream guarded, the Response
finished (answering model, cost) and failures turned into ModelError.

Apart from client.py because this is where the pydantic types are needed: a Client that
is made and resolves a route, without calling a model, never imports them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .errors import ErrorClass, ModelError, ModelplugError, RequestError, describe_error
from .http_pool import OpenStreams, http_options, pool_notice
from .redact import redact
from .types import (
    Done,
    Event,
    Message,
    Notice,
    Request,
    RequestLike,
    Response,
    TextDelta,
    ThinkingDelta,
)

if TYPE_CHECKING:
    from .client import Client, EventCallback
    from .routes import Route

__all__ = ["coerce_request", "dispatch", "guarded_stream"]

log = logging.getLogger("modelplug")
# The Client.async_http key of each loop's open-stream count.
OPEN_STREAMS = "modelplug.open-streams"


def coerce_request(request: RequestLike | None, fields: Mapping[str, Any]) -> Request:
    """A Request from whatever the caller gave; RequestError names every problem."""
    try:
        return Request.coerce(request if request is not None else "", **fields)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'request'}: {e['msg']}" for e in exc.errors()
        )
        raise RequestError(f"invalid request: {problems}") from None
    except (TypeError, ValueError) as exc:
        raise RequestError(f"invalid request: {exc}") from None


async def guarded_stream(
    client: Client, spec: str | None, request: RequestLike | None, fields: Mapping[str, Any]
) -> AsyncIterator[Event]:
    """:meth:`Client.astream`'s body: deltas, notices, then exactly one priced Done."""
    req = coerce_request(request, fields)
    route = client.resolve(spec)
    stream = client.open_stream(route, req)
    # Streams open on this client and loop: at [http] max_connections, say so first
    # rather than wait for a connection in silence (see modelplug.http_pool).
    streams = client.async_http(
        OPEN_STREAMS, lambda: OpenStreams(http_options(client.settings).max_connections)
    )
    notice = pool_notice(streams.count, streams.limit)
    streams.count += 1
    # The guard lives inline (not in a nested generator): one async-generator layer
    # less per event on the hot path. It keeps what was shown (for a partial
    # Response), prices the Done, redacts notices and turns failures into ModelError.
    text: list[str] = []
    thought: list[str] = []
    done = False
    try:
        if notice is not None:
            yield notice
        async for event in stream:
            kind = type(event)
            if kind is TextDelta:
                text.append(event.text)  # type: ignore[union-attr]
            elif kind is Done:
                yield Done(response=_finish(client, route, event.response))  # type: ignore[union-attr]
                done = True
                break
            elif kind is ThinkingDelta:
                thought.append(event.text)  # type: ignore[union-attr]
            elif kind is Notice:
                event = event.model_copy(update={"message": redact(event.message)})  # type: ignore[union-attr]
            yield event
    except ModelError as exc:
        if exc.partial is None:
            # Named for the model that failed (a fallback's), not the one asked.
            exc.partial = _partial(exc.route or route, text, thought)
        raise
    except (asyncio.CancelledError, GeneratorExit, KeyboardInterrupt):
        raise
    except ModelplugError:
        # A missing key, a bad setting, an exhausted script: not a model failure.
        raise
    except Exception as exc:
        error_class = client.classify(exc, route)
        partial = getattr(exc, "partial", None)
        if isinstance(partial, Message):
            partial = Response(message=partial, stop_reason="other", model=route.name)
        if not isinstance(partial, Response):
            partial = _partial(route, text, thought)
        message = describe_error(exc, error_class)
        raise ModelError(message, error_class=error_class, route=route, partial=partial) from exc
    finally:
        streams.count -= 1
        # Close the provider's stream now, not at garbage collection: an abort must
        # reach it while its HTTP client is still open (to cancel a batch, say).
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    if not done:
        raise ModelError(
            f"the {route.provider} plugin ended its stream without a Done event",
            error_class=ErrorClass(kind="other", reason="stream ended early"),
            route=route,
            partial=_partial(route, text, thought),
        )


def _finish(client: Client, route: Route, response: Response) -> Response:
    answered = response.model or route.name
    updates: dict[str, Any] = {"model": answered}
    if response.message.model is None:
        updates["message"] = response.message.model_copy(update={"model": answered})
    if response.cost is None:
        priced = route if answered == route.name else _route_named(client, answered, route)
        cost = client.price(priced, response.usage, response.price_factor)
        updates["cost"] = cost if cost is not None else response.server_cost
    return response.model_copy(update=updates)


def _route_named(client: Client, name: str, fallback: Route) -> Route:
    try:
        return client.resolve(name)
    except ModelplugError:
        return fallback


def _partial(route: Route, text: list[str], thought: list[str]) -> Response | None:
    """What the stream showed before it failed, or None when it showed nothing."""
    if not text and not thought:
        return None
    return Response.partial(route.name, "".join(text), "".join(thought))


def dispatch(event: Event, on_event: EventCallback | None) -> Response | None:
    """One event of complete()/acomplete(): the Response of a Done; any other event to
    ``on_event``, or a notice to the log when there is no callback."""
    if isinstance(event, Done):
        return event.response
    if on_event is not None:
        on_event(event)
    elif isinstance(event, Notice):
        log.warning("%s", event.message)
    return None
