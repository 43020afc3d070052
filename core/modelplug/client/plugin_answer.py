"""Awaiting a plugin's one answer (an embedding call, a transcription): what it raises
becomes a ModelError of the route, classified when the plugin raised something of its
own, and cleaned of secrets; the caller's cancel goes through untouched."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, TypeVar

from modelplug.client.calls import clean_error
from modelplug.contract.errors import ModelError, ModelplugError, describe_error

if TYPE_CHECKING:
    from modelplug.client.surface import ClientSurface
    from modelplug.contract.routes import Route

__all__ = ["plugin_answer"]

T = TypeVar("T")


async def plugin_answer(client: ClientSurface, route: Route, waiting: Awaitable[T]) -> T:
    """What ``waiting`` answers; a failure raised as a clean, classified ModelplugError."""
    failure: ModelplugError
    try:
        return await waiting
    except ModelplugError as exc:
        failure = exc
    except (asyncio.CancelledError, KeyboardInterrupt):
        raise
    except Exception as exc:
        error_class = client.classify(exc, route)
        failure = ModelError(describe_error(exc, error_class), error_class=error_class, route=route)
        failure.__cause__ = exc
        failure.__suppress_context__ = True
    raise clean_error(failure)
