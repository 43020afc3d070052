"""modelplug: a provider-neutral LLM client built as a pluggy plugin ecosystem.

The public API::

    import modelplug
    response = modelplug.complete("echo", "hello there")
    for event in modelplug.stream("anthropic/claude-sonnet-4-6", "Write a haiku"):
        ...

Names are imported on first use (PEP 562), so ``import modelplug`` stays cheap. Type
checkers see each of them through an explicit re-export (``X as X``) under
``TYPE_CHECKING``; tests/test_typed_top_level.py keeps that block equal to ``__all__``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator, Sequence

    from .client import Client as Client
    from .client import EventCallback
    from .errors import ConfigError as ConfigError
    from .errors import ErrorClass as ErrorClass
    from .errors import MissingKeyError as MissingKeyError
    from .errors import ModelError as ModelError
    from .errors import ModelplugError as ModelplugError
    from .errors import NoProviderError as NoProviderError
    from .errors import OutputTruncatedError as OutputTruncatedError
    from .errors import OutputValidationError as OutputValidationError
    from .errors import PluginError as PluginError
    from .errors import PluginLoadError as PluginLoadError
    from .errors import RequestError as RequestError
    from .errors import TextCallError as TextCallError
    from .errors import UnknownProviderError as UnknownProviderError
    from .held_text import HeldText as HeldText
    from .hookspecs import hookspec as hookspec
    from .plugins import hookimpl as hookimpl
    from .redact import redact as redact
    from .replay import replayable_messages as replayable_messages
    from .routes import Endpoint as Endpoint
    from .routes import ModelInfo as ModelInfo
    from .routes import Price as Price
    from .routes import Provider as Provider
    from .routes import Route as Route
    from .routes import TextCallMode as TextCallMode
    from .settings import ModelplugWarning as ModelplugWarning
    from .settings import Settings as Settings
    from .settings import check_base_url as check_base_url
    from .settings import load_settings as load_settings
    from .types import Block as Block
    from .types import Citation as Citation
    from .types import Cost as Cost
    from .types import Done as Done
    from .types import Effort as Effort
    from .types import Embeddings as Embeddings
    from .types import EmbedRequest as EmbedRequest
    from .types import Event as Event
    from .types import ImageBlock as ImageBlock
    from .types import Message as Message
    from .types import Notice as Notice
    from .types import OpaqueBlock as OpaqueBlock
    from .types import OutputSchema as OutputSchema
    from .types import ParsedText as ParsedText
    from .types import Request as Request
    from .types import RequestLike
    from .types import Response as Response
    from .types import ServerTool as ServerTool
    from .types import StopReason as StopReason
    from .types import TextBlock as TextBlock
    from .types import TextDelta as TextDelta
    from .types import ThinkingBlock as ThinkingBlock
    from .types import ThinkingDelta as ThinkingDelta
    from .types import ThinkingRequest as ThinkingRequest
    from .types import ToolCallStart as ToolCallStart
    from .types import ToolResultBlock as ToolResultBlock
    from .types import ToolSpec as ToolSpec
    from .types import ToolUseBlock as ToolUseBlock
    from .types import Usage as Usage
    from .types import new_tool_use_id as new_tool_use_id

__version__ = "1.1.0.dev0"

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
    "EmbedRequest",
    "Embeddings",
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
    "aembed",
    "astream",
    "complete",
    "default_client",
    "embed",
    "stream",
]


_default: Client | None = None

if not TYPE_CHECKING:
    # Hidden from type checkers, so a name missing from the re-exports above is an
    # error in the user's code instead of an Any.
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
    return _default


def complete(
    spec: str | None = None,
    request: RequestLike | None = None,
    *,
    on_event: EventCallback | None = None,
    **fields: Any,
) -> Response:
    """``default_client().complete(spec, request, ...)``."""
    return default_client().complete(spec, request, on_event=on_event, **fields)


def stream(
    spec: str | None = None, request: RequestLike | None = None, **fields: Any
) -> Iterator[Event]:
    """``default_client().stream(spec, request, ...)``."""
    return default_client().stream(spec, request, **fields)


async def acomplete(
    spec: str | None = None,
    request: RequestLike | None = None,
    *,
    on_event: EventCallback | None = None,
    **fields: Any,
) -> Response:
    """``await default_client().acomplete(spec, request, ...)``."""
    return await default_client().acomplete(spec, request, on_event=on_event, **fields)


def astream(
    spec: str | None = None, request: RequestLike | None = None, **fields: Any
) -> AsyncIterator[Event]:
    """``default_client().astream(spec, request, ...)``."""
    return default_client().astream(spec, request, **fields)


def embed(
    spec: str | None = None,
    inputs: str | Sequence[str] = (),
    *,
    dimensions: int | None = None,
    **fields: Any,
) -> Embeddings:
    """``default_client().embed(spec, inputs, ...)``."""
    return default_client().embed(spec, inputs, dimensions=dimensions, **fields)


async def aembed(
    spec: str | None = None,
    inputs: str | Sequence[str] = (),
    *,
    dimensions: int | None = None,
    **fields: Any,
) -> Embeddings:
    """``await default_client().aembed(spec, inputs, ...)``."""
    return await default_client().aembed(spec, inputs, dimensions=dimensions, **fields)
