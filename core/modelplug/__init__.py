"""modelplug: a provider-neutral LLM client built as a pluggy plugin ecosystem.

The public API::

    import modelplug
    response = modelplug.complete("echo", "hello there")
    for event in modelplug.stream("anthropic/claude-sonnet-4-6", "Write a haiku"):
        ...

This module is core's one export list: :data:`EXPORTS` names every public name and the
module it lives in (``modelplug.contract``, ``modelplug.host``, ``modelplug.client``,
``modelplug.builtin``; docs/architecture.md). Names are imported on first use (PEP 562),
so ``import modelplug`` stays cheap; type checkers see each through the explicit
re-export (``X as X``) under ``TYPE_CHECKING``, which tests/test_typed_top_level.py keeps
equal to :data:`EXPORTS`. Plugins import from here and from ``modelplug_kit``, nothing
deeper.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator, Sequence

    from modelplug.builtin.classify import classify_generic as classify_generic
    from modelplug.builtin.classify import retry_after_from_headers as retry_after_from_headers
    from modelplug.builtin.classify import retry_after_of as retry_after_of
    from modelplug.client.calls import EventCallback as EventCallback
    from modelplug.client.client import Client as Client
    from modelplug.client.conversation import as_request as as_request
    from modelplug.client.conversation import to_openai_messages as to_openai_messages
    from modelplug.client.splice import Offer as Offer
    from modelplug.client.splice import Splice as Splice
    from modelplug.client.splice import SpliceReader as SpliceReader
    from modelplug.client.structured import undo_strict as undo_strict
    from modelplug.contract.budget import DEFAULT_BUDGET_MESSAGE as DEFAULT_BUDGET_MESSAGE
    from modelplug.contract.budget import DEFAULT_REASONING_RESERVE as DEFAULT_REASONING_RESERVE
    from modelplug.contract.budget import reasoning_budget as reasoning_budget
    from modelplug.contract.context import CallContext as CallContext
    from modelplug.contract.errors import ConfigError as ConfigError
    from modelplug.contract.errors import CutToolCall as CutToolCall
    from modelplug.contract.errors import ErrorClass as ErrorClass
    from modelplug.contract.errors import ErrorKind as ErrorKind
    from modelplug.contract.errors import MissingKeyError as MissingKeyError
    from modelplug.contract.errors import ModelError as ModelError
    from modelplug.contract.errors import ModelplugError as ModelplugError
    from modelplug.contract.errors import NoKeyBudgetError as NoKeyBudgetError
    from modelplug.contract.errors import NoProviderError as NoProviderError
    from modelplug.contract.errors import OutputTruncatedError as OutputTruncatedError
    from modelplug.contract.errors import OutputValidationError as OutputValidationError
    from modelplug.contract.errors import PluginError as PluginError
    from modelplug.contract.errors import PluginLoadError as PluginLoadError
    from modelplug.contract.errors import PluginLockError as PluginLockError
    from modelplug.contract.errors import RequestError as RequestError
    from modelplug.contract.errors import TextCallError as TextCallError
    from modelplug.contract.errors import TruncatedToolCallError as TruncatedToolCallError
    from modelplug.contract.errors import UnknownProviderError as UnknownProviderError
    from modelplug.contract.errors import class_for_status as class_for_status
    from modelplug.contract.errors import describe_error as describe_error
    from modelplug.contract.estimate import CHARS_PER_TOKEN as CHARS_PER_TOKEN
    from modelplug.contract.estimate import estimate_tokens as estimate_tokens
    from modelplug.contract.estimate import estimated_usage as estimated_usage
    from modelplug.contract.held_text import HeldText as HeldText
    from modelplug.contract.hookspecs import hookimpl as hookimpl
    from modelplug.contract.hookspecs import hookspec as hookspec
    from modelplug.contract.loose_json import parse_arguments as parse_arguments
    from modelplug.contract.loose_json import repair_loose_json as repair_loose_json
    from modelplug.contract.observers import RetryCallback as RetryCallback
    from modelplug.contract.observers import RetryEvent as RetryEvent
    from modelplug.contract.observers import UsageCallback as UsageCallback
    from modelplug.contract.observers import UsageEvent as UsageEvent
    from modelplug.contract.repetition import RepetitionDetector as RepetitionDetector
    from modelplug.contract.repetition import RepetitionGuard as RepetitionGuard
    from modelplug.contract.replay import is_replayable as is_replayable
    from modelplug.contract.replay import replayable_blocks as replayable_blocks
    from modelplug.contract.replay import replayable_messages as replayable_messages
    from modelplug.contract.routes import Endpoint as Endpoint
    from modelplug.contract.routes import ModelInfo as ModelInfo
    from modelplug.contract.routes import Price as Price
    from modelplug.contract.routes import Provider as Provider
    from modelplug.contract.routes import Route as Route
    from modelplug.contract.routes import TextCallMode as TextCallMode
    from modelplug.contract.secrets import redact as redact
    from modelplug.contract.secrets import redact_data as redact_data
    from modelplug.contract.secrets import register_secret as register_secret
    from modelplug.contract.settings import ModelplugWarning as ModelplugWarning
    from modelplug.contract.settings import Settings as Settings
    from modelplug.contract.settings import check_base_url as check_base_url
    from modelplug.contract.settings import is_loopback_url as is_loopback_url
    from modelplug.contract.settings import warn as warn
    from modelplug.contract.transcripts import TranscribeRequest as TranscribeRequest
    from modelplug.contract.transcripts import Transcript as Transcript
    from modelplug.contract.transcripts import audio_mime_type as audio_mime_type
    from modelplug.contract.types import Block as Block
    from modelplug.contract.types import BudgetSource as BudgetSource
    from modelplug.contract.types import Citation as Citation
    from modelplug.contract.types import Cost as Cost
    from modelplug.contract.types import Done as Done
    from modelplug.contract.types import Effort as Effort
    from modelplug.contract.types import Embeddings as Embeddings
    from modelplug.contract.types import EmbedRequest as EmbedRequest
    from modelplug.contract.types import Event as Event
    from modelplug.contract.types import ImageBlock as ImageBlock
    from modelplug.contract.types import KeyBudget as KeyBudget
    from modelplug.contract.types import Message as Message
    from modelplug.contract.types import Notice as Notice
    from modelplug.contract.types import OpaqueBlock as OpaqueBlock
    from modelplug.contract.types import OutputSchema as OutputSchema
    from modelplug.contract.types import ParsedText as ParsedText
    from modelplug.contract.types import Repetition as Repetition
    from modelplug.contract.types import Request as Request
    from modelplug.contract.types import RequestLike as RequestLike
    from modelplug.contract.types import Response as Response
    from modelplug.contract.types import ServerTool as ServerTool
    from modelplug.contract.types import StopReason as StopReason
    from modelplug.contract.types import TextBlock as TextBlock
    from modelplug.contract.types import TextDelta as TextDelta
    from modelplug.contract.types import ThinkingBlock as ThinkingBlock
    from modelplug.contract.types import ThinkingDelta as ThinkingDelta
    from modelplug.contract.types import ThinkingRequest as ThinkingRequest
    from modelplug.contract.types import Timings as Timings
    from modelplug.contract.types import ToolCallStart as ToolCallStart
    from modelplug.contract.types import ToolResultBlock as ToolResultBlock
    from modelplug.contract.types import ToolSpec as ToolSpec
    from modelplug.contract.types import ToolUseBlock as ToolUseBlock
    from modelplug.contract.types import Usage as Usage
    from modelplug.contract.types import new_tool_use_id as new_tool_use_id
    from modelplug.host.http_options import HTTPOptions as HTTPOptions
    from modelplug.host.http_options import http_options as http_options
    from modelplug.host.lazy import lazy_exports as lazy_exports
    from modelplug.host.options import read_options as read_options
    from modelplug.host.plugins import find_policies as find_policies
    from modelplug.host.provider_table import declared_providers as declared_providers
    from modelplug.host.provider_table import provider_options as provider_options
    from modelplug.host.provider_table import user_endpoint as user_endpoint
    from modelplug.host.settings import load_settings as load_settings
    from modelplug.host.settings import user_config_path as user_config_path

__version__ = "2.0.0.dev0"

#: Every public name of core and the module it lives in.
EXPORTS = {
    "classify_generic": "modelplug.builtin.classify",
    "retry_after_from_headers": "modelplug.builtin.classify",
    "retry_after_of": "modelplug.builtin.classify",
    "Client": "modelplug.client.client",
    "EventCallback": "modelplug.client.calls",
    "as_request": "modelplug.client.conversation",
    "to_openai_messages": "modelplug.client.conversation",
    "HeldText": "modelplug.contract.held_text",
    "Offer": "modelplug.client.splice",
    "Splice": "modelplug.client.splice",
    "SpliceReader": "modelplug.client.splice",
    "undo_strict": "modelplug.client.structured",
    "CallContext": "modelplug.contract.context",
    "ConfigError": "modelplug.contract.errors",
    "ErrorClass": "modelplug.contract.errors",
    "ErrorKind": "modelplug.contract.errors",
    "MissingKeyError": "modelplug.contract.errors",
    "NoKeyBudgetError": "modelplug.contract.errors",
    "ModelError": "modelplug.contract.errors",
    "ModelplugError": "modelplug.contract.errors",
    "NoProviderError": "modelplug.contract.errors",
    "OutputTruncatedError": "modelplug.contract.errors",
    "TruncatedToolCallError": "modelplug.contract.errors",
    "CutToolCall": "modelplug.contract.errors",
    "RetryCallback": "modelplug.contract.observers",
    "RetryEvent": "modelplug.contract.observers",
    "UsageCallback": "modelplug.contract.observers",
    "UsageEvent": "modelplug.contract.observers",
    "OutputValidationError": "modelplug.contract.errors",
    "PluginError": "modelplug.contract.errors",
    "PluginLoadError": "modelplug.contract.errors",
    "PluginLockError": "modelplug.contract.errors",
    "RequestError": "modelplug.contract.errors",
    "TextCallError": "modelplug.contract.errors",
    "UnknownProviderError": "modelplug.contract.errors",
    "class_for_status": "modelplug.contract.errors",
    "describe_error": "modelplug.contract.errors",
    "DEFAULT_BUDGET_MESSAGE": "modelplug.contract.budget",
    "DEFAULT_REASONING_RESERVE": "modelplug.contract.budget",
    "reasoning_budget": "modelplug.contract.budget",
    "CHARS_PER_TOKEN": "modelplug.contract.estimate",
    "estimate_tokens": "modelplug.contract.estimate",
    "estimated_usage": "modelplug.contract.estimate",
    "hookimpl": "modelplug.contract.hookspecs",
    "hookspec": "modelplug.contract.hookspecs",
    "parse_arguments": "modelplug.contract.loose_json",
    "repair_loose_json": "modelplug.contract.loose_json",
    "is_replayable": "modelplug.contract.replay",
    "replayable_blocks": "modelplug.contract.replay",
    "replayable_messages": "modelplug.contract.replay",
    "Endpoint": "modelplug.contract.routes",
    "ModelInfo": "modelplug.contract.routes",
    "Price": "modelplug.contract.routes",
    "Provider": "modelplug.contract.routes",
    "Route": "modelplug.contract.routes",
    "TextCallMode": "modelplug.contract.routes",
    "redact": "modelplug.contract.secrets",
    "redact_data": "modelplug.contract.secrets",
    "register_secret": "modelplug.contract.secrets",
    "Block": "modelplug.contract.types",
    "Citation": "modelplug.contract.types",
    "BudgetSource": "modelplug.contract.types",
    "Cost": "modelplug.contract.types",
    "KeyBudget": "modelplug.contract.types",
    "Timings": "modelplug.contract.types",
    "Done": "modelplug.contract.types",
    "Effort": "modelplug.contract.types",
    "EmbedRequest": "modelplug.contract.types",
    "Embeddings": "modelplug.contract.types",
    "TranscribeRequest": "modelplug.contract.transcripts",
    "Transcript": "modelplug.contract.transcripts",
    "audio_mime_type": "modelplug.contract.transcripts",
    "Event": "modelplug.contract.types",
    "ImageBlock": "modelplug.contract.types",
    "Message": "modelplug.contract.types",
    "Notice": "modelplug.contract.types",
    "OpaqueBlock": "modelplug.contract.types",
    "OutputSchema": "modelplug.contract.types",
    "ParsedText": "modelplug.contract.types",
    "Repetition": "modelplug.contract.types",
    "RepetitionDetector": "modelplug.contract.repetition",
    "RepetitionGuard": "modelplug.contract.repetition",
    "Request": "modelplug.contract.types",
    "RequestLike": "modelplug.contract.types",
    "Response": "modelplug.contract.types",
    "ServerTool": "modelplug.contract.types",
    "StopReason": "modelplug.contract.types",
    "TextBlock": "modelplug.contract.types",
    "TextDelta": "modelplug.contract.types",
    "ThinkingBlock": "modelplug.contract.types",
    "ThinkingDelta": "modelplug.contract.types",
    "ThinkingRequest": "modelplug.contract.types",
    "ToolCallStart": "modelplug.contract.types",
    "ToolResultBlock": "modelplug.contract.types",
    "ToolSpec": "modelplug.contract.types",
    "ToolUseBlock": "modelplug.contract.types",
    "Usage": "modelplug.contract.types",
    "new_tool_use_id": "modelplug.contract.types",
    "lazy_exports": "modelplug.host.lazy",
    "read_options": "modelplug.host.options",
    "HTTPOptions": "modelplug.host.http_options",
    "http_options": "modelplug.host.http_options",
    "find_policies": "modelplug.host.plugins",
    "declared_providers": "modelplug.host.provider_table",
    "provider_options": "modelplug.host.provider_table",
    "user_endpoint": "modelplug.host.provider_table",
    "ModelplugWarning": "modelplug.contract.settings",
    "Settings": "modelplug.contract.settings",
    "check_base_url": "modelplug.contract.settings",
    "is_loopback_url": "modelplug.contract.settings",
    "load_settings": "modelplug.host.settings",
    "user_config_path": "modelplug.host.settings",
    "warn": "modelplug.contract.settings",
}

__all__ = [
    *sorted(EXPORTS),
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
        module = EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module 'modelplug' has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


def default_client() -> Client:
    """The process-wide Client the module-level functions use (made on first use)."""
    global _default
    if _default is None:
        from modelplug.client.client import Client

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
