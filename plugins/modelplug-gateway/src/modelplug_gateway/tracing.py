"""The SERVER span of each request, when modelplug-otel is on in the gateway's Client.

The HTTP conventions' server span: named ``{method} {route}`` (``POST
/v1/chat/completions``), its parent the caller's ``traceparent``, current while the call
runs so the call's CLIENT span (``chat {model}``) is its child, and ending with the
status the gateway answered. Whether to trace is decided once, when the app is made:
with modelplug-otel not installed, disabled, or left out of the Client, there is no
tracer and a request pays one ``is None`` test.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, MutableMapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from modelplug import Client

__all__ = ["RequestSpan", "request_tracer"]

Scope = MutableMapping[str, Any]


class RequestSpan:
    """One request's SERVER span, current from :func:`request_tracer`'s call until
    :meth:`end` (called once, in the request's ``finally``)."""

    __slots__ = ("_block", "_respond", "_span")

    def __init__(
        self, block: AbstractContextManager[Any], respond: Callable[[Any, int], None]
    ) -> None:
        self._block = block
        self._respond = respond
        self._span = block.__enter__()

    def end(self, status: int) -> None:
        """End the span with the status answered; an exception on its way out of the
        request (a cancellation, a bug) marks it failed, as leaving the block would."""
        self._respond(self._span, status)
        self._block.__exit__(*sys.exc_info())


def request_tracer(client: Client) -> Callable[[Scope], RequestSpan] | None:
    """What opens a request's span, or None when this client does not trace (the
    modelplug-otel policy is not registered on it: not installed, disabled by
    ``MODELPLUG_PLUGINS``/``MODELPLUG_DISABLE`` or the settings, or not given)."""
    if not client.policies("otel"):
        return None
    try:
        from modelplug_otel import server_response, server_span
    except ImportError:  # a policy of that kind that is not modelplug-otel
        return None

    def open_span(scope: Scope) -> RequestSpan:
        method, path = scope["method"], scope["path"]
        attributes: dict[str, Any] = {
            "http.request.method": method,
            "http.route": path,  # the gateway routes exact paths
            "url.path": path,
            "url.scheme": scope.get("scheme", "http"),
        }
        server = scope.get("server")
        if server and server[1] is not None:
            attributes["server.address"], attributes["server.port"] = server[0], server[1]
        client_address = scope.get("client")
        if client_address:
            attributes["client.address"] = client_address[0]
        version = scope.get("http_version")
        if version:
            attributes["network.protocol.version"] = version
        block = server_span(scope["headers"], f"{method} {path}", attributes)
        return RequestSpan(block, server_response)

    return open_span
