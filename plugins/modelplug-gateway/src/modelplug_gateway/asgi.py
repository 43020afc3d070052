"""The ASGI shapes the gateway's modules share: a call's scope, its receive and send
callables, and the error a body read raises when the caller went away.

Its own module, below :mod:`.app`, so the endpoint modules beside the app
(:mod:`.embeddings`, :mod:`.models`) name them without importing the app that imports
them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["Disconnected", "Message", "Receive", "Scope", "Send"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class Disconnected(Exception):
    """The caller went away before its body arrived."""
