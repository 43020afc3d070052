"""modelplug: a provider-neutral LLM client built as a pluggy plugin ecosystem.

The public API::

    import modelplug
    response = modelplug.complete("echo", "hello there")
    for event in modelplug.stream("anthropic/claude-sonnet-4-5", "Write a haiku"):
        ...

Names are imported on first use (PEP 562), so ``import modelplug`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "1.0.0"

_EXPORTS = {
    # client
    "Client": "client",
    # hooks
    "hookimpl": "plugins",
    "hookspec": "hookspecs",
    # settings
    "Settings": "settings",
    "load_settings": "settings",
    "ModelplugWarning": "settings",
    # errors
    "ErrorClass": "errors",
    "ModelplugError": "errors",
    "ModelError": "errors",
    "ConfigError": "errors",
    "MissingKeyError": "errors",
    "UnknownProviderError": "errors",
    "RequestError": "errors",
    "NoProviderError": "errors",
    "OutputTruncatedError": "errors",
    "OutputValidationError": "errors",
    "PluginError": "errors",
    "PluginLoadError": "errors",
    "TextCallError": "errors",
    # helpers for adapters
    "HeldText": "held_text",
    "replayable_messages": "replay",
    "check_base_url": "settings",
    "redact": "redact",
}
_TYPES = [
    "Block",
    "Citation",
    "Cost",
    "Done",
    "Effort",
    "Endpoint",
    "Event",
    "ImageBlock",
    "Message",
    "ModelInfo",
    "Notice",
    "OpaqueBlock",
    "OutputSchema",
    "ParsedText",
    "Price",
    "Provider",
    "Request",
    "Response",
    "Route",
    "ServerTool",
    "StopReason",
    "TextBlock",
    "TextCallMode",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingDelta",
    "ThinkingRequest",
    "ToolCallStart",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "Usage",
    "new_tool_use_id",
]
_EXPORTS.update(dict.fromkeys(_TYPES, "types"))
# The route records are plain dataclasses: ``modelplug.Route`` must not load pydantic.
_ROUTE_RECORDS = ["Endpoint", "ModelInfo", "Price", "Provider", "Route", "TextCallMode"]
_EXPORTS.update(dict.fromkeys(_ROUTE_RECORDS, "routes"))

__all__ = [
    *sorted(_EXPORTS),
    "acomplete",
    "astream",
    "complete",
    "default_client",
    "stream",
]

_default: Any = None


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'modelplug' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"modelplug.{module}"), name)
    globals()[name] = value
    return value


def default_client() -> Client:
    """The process-wide Client the module-level functions use (made on first use)."""
    global _default
    if _default is None:
        from .client import Client

        _default = Client()
    client: Client = _default
    return client


def complete(spec: str | None = None, request: Any = None, **kwargs: Any) -> Response:
    """``default_client().complete(spec, request, ...)``."""
    return default_client().complete(spec, request, **kwargs)


def stream(spec: str | None = None, request: Any = None, **kwargs: Any) -> Iterator[Event]:
    """``default_client().stream(spec, request, ...)``."""
    return default_client().stream(spec, request, **kwargs)


async def acomplete(spec: str | None = None, request: Any = None, **kwargs: Any) -> Response:
    """``await default_client().acomplete(spec, request, ...)``."""
    return await default_client().acomplete(spec, request, **kwargs)


def astream(spec: str | None = None, request: Any = None, **kwargs: Any) -> AsyncIterator[Event]:
    """``default_client().astream(spec, request, ...)``."""
    return default_client().astream(spec, request, **kwargs)


if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from .client import Client
    from .errors import (
        ConfigError,
        ErrorClass,
        MissingKeyError,
        ModelError,
        ModelplugError,
        NoProviderError,
        OutputTruncatedError,
        OutputValidationError,
        PluginError,
        PluginLoadError,
        RequestError,
        TextCallError,
        UnknownProviderError,
    )
    from .held_text import HeldText
    from .hookspecs import hookspec
    from .plugins import hookimpl
    from .redact import redact
    from .replay import replayable_messages
    from .settings import ModelplugWarning, Settings, check_base_url, load_settings
    from .types import *
