"""Sending one Chat Completions request and checking what came back before reading it.

A pooled keep-alive connection may be dead: llama.cpp's llama-server closes the
connection after every streamed answer while its headers say keep-alive, and the pool
can hand the closed connection to the next call, which then fails before any byte of
an answer ("Server disconnected without sending a response"). Such a send is made
again once, at once, with no backoff and no notice: the server never answered, so it
cannot have acted on the request. Any other failure is reported as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from modelplug.plugin import ErrorClass

from .errors import StreamBrokenError, http_error, stream_broken, unreachable

if TYPE_CHECKING:
    import httpx2
    from modelplug.plugin import Route

__all__ = ["check_answer", "send"]

NO_ANSWER = "without sending a response"


def _never_answered(exc: Exception) -> bool:
    """Whether a send failed before the server sent any byte of an answer."""
    import httpx2

    if isinstance(exc, httpx2.RemoteProtocolError):
        return NO_ANSWER in str(exc)
    # A write that failed on a connection the server had already closed: nothing of
    # an answer can have been read yet. (A read error is not resent: it may come
    # after part of an answer.)
    return isinstance(exc, httpx2.WriteError)


async def send(http: httpx2.AsyncClient, request: httpx2.Request, route: Route) -> httpx2.Response:
    """The response to ``request``, headers read and body not yet; a classified error
    when it could not be had."""
    import httpx2

    try:
        try:
            return await http.send(request, stream=True)
        except httpx2.TransportError as exc:
            if not _never_answered(exc):
                raise
        # Once, at once: a dead pooled connection, not a struggling server.
        return await http.send(request, stream=True)
    except httpx2.ConnectError:
        raise unreachable(route) from None
    except httpx2.TimeoutException as exc:
        raise stream_broken(
            route,
            f"{route.provider} at {route.endpoint.base_url} did not answer in time "
            f"({type(exc).__name__})",
            reason="timed out",
        ) from None
    except httpx2.TransportError as exc:
        raise stream_broken(
            route,
            f"the request to {route.provider} failed: {type(exc).__name__}",
            reason="connection lost",
        ) from None


async def check_answer(response: httpx2.Response, route: Route) -> None:
    """Raise the classified error for an answer that is not a stream to read: an error
    status, or a page (a login portal, a proxy's error page) where events should be."""
    import httpx2

    if response.status_code >= 300:
        try:
            body = await response.aread()
        except httpx2.HTTPError:
            body = b""
        raise http_error(response.status_code, response.headers, body, route)
    kind = response.headers.get("content-type", "")
    if kind.startswith("text/html"):
        raise not_a_stream(route, kind.split(";")[0])


def not_a_stream(route: Route, kind: str) -> StreamBrokenError:
    """A 200 that is a web page: asking again gets the same page, so no retry."""
    return StreamBrokenError(
        f"{route.provider} at {route.endpoint.base_url}: the server answered {kind}, not an "
        "event stream; check base_url (it may point at a web page or a proxy's login page)",
        error_class=ErrorClass(
            kind="other",
            retryable=False,
            fallback=True,
            status=200,
            reason="the answer was a web page",
        ),
        route=route,
    )
