"""The hook relay's type: what ``client.hook.<name>(...)`` takes and returns.

pluggy's relay is dynamic (every attribute is a ``HookCaller``), so a type checker
cannot see a wrong argument or use a result wrongly. :class:`HookRelay` spells out each
hook of :mod:`modelplug.contract.hookspecs` as pluggy calls it: keyword arguments only; a
``firstresult`` hook returns one answer or None, the others a list of every answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import argparse

    from modelplug.contract.context import CallContext
    from modelplug.contract.errors import ErrorClass
    from modelplug.contract.repetition import RepetitionDetector, RepetitionGuard
    from modelplug.contract.routes import ModelInfo, Provider, Route
    from modelplug.contract.settings import Settings
    from modelplug.contract.transcripts import TranscribeRequest, Transcript
    from modelplug.contract.types import (
        Cost,
        Embeddings,
        EmbedRequest,
        Event,
        KeyBudget,
        ParsedText,
        Request,
        ToolSpec,
        Usage,
    )

__all__ = ["HookRelay"]


class _Resolve(Protocol):
    def __call__(
        self, *, spec: str, settings: Settings, provider_type: str | None
    ) -> Route | None: ...


class _Stream(Protocol):
    def __call__(
        self, *, route: Route, request: Request, client: CallContext
    ) -> AsyncIterator[Event] | None: ...


class _RepetitionDetector(Protocol):
    def __call__(
        self, *, route: Route, request: Request, guard: RepetitionGuard, client: CallContext
    ) -> RepetitionDetector | None: ...


class _Price(Protocol):
    def __call__(
        self, *, route: Route, usage: Usage, price_factor: float, settings: Settings
    ) -> Cost | None: ...


class _Classify(Protocol):
    def __call__(self, *, error: BaseException, route: Route | None) -> ErrorClass | None: ...


class _ParseTextToolCalls(Protocol):
    def __call__(
        self,
        *,
        text: str,
        tools: list[ToolSpec],
        mode: str,
        final: bool,
        state: dict[str, Any] | None,
    ) -> ParsedText | None: ...


class _ModelInfo(Protocol):
    def __call__(self, *, route: Route, settings: Settings) -> ModelInfo | None: ...


class _Providers(Protocol):
    def __call__(self, *, settings: Settings) -> list[list[Provider]]: ...


class _Probe(Protocol):
    def __call__(self, *, route: Route, client: CallContext) -> Awaitable[ModelInfo] | None: ...


class _ListModels(Protocol):
    def __call__(self, *, route: Route, client: CallContext) -> Awaitable[list[str]] | None: ...


class _CliCommands(Protocol):
    def __call__(
        self, *, subparsers: argparse._SubParsersAction[Any], client: CallContext
    ) -> list[None]: ...


class _DescribeRoute(Protocol):
    def __call__(
        self, *, route: Route, client: CallContext
    ) -> list[Awaitable[dict[str, Any]] | None]: ...


class _Close(Protocol):
    def __call__(self, *, client: CallContext) -> list[None]: ...


class _Embed(Protocol):
    def __call__(
        self, *, route: Route, request: EmbedRequest, client: CallContext
    ) -> Awaitable[Embeddings] | None: ...


class _Transcribe(Protocol):
    def __call__(
        self, *, route: Route, request: TranscribeRequest, client: CallContext
    ) -> Awaitable[Transcript] | None: ...


class _CountTokens(Protocol):
    def __call__(
        self, *, route: Route, content: str | Request, client: CallContext
    ) -> Awaitable[int | None] | None: ...


class _KeyBudget(Protocol):
    def __call__(
        self, *, route: Route, client: CallContext, source: str | None
    ) -> Awaitable[KeyBudget | None] | None: ...


class HookRelay(Protocol):
    """``client.hook``: one typed caller per hook spec."""

    modelplug_resolve: _Resolve
    modelplug_stream: _Stream
    modelplug_repetition_detector: _RepetitionDetector
    modelplug_price: _Price
    modelplug_classify_error: _Classify
    modelplug_parse_text_tool_calls: _ParseTextToolCalls
    modelplug_model_info: _ModelInfo
    modelplug_providers: _Providers
    modelplug_probe: _Probe
    modelplug_list_models: _ListModels
    modelplug_cli_commands: _CliCommands
    modelplug_describe_route: _DescribeRoute
    modelplug_embed: _Embed
    modelplug_transcribe: _Transcribe
    modelplug_close: _Close
    modelplug_count_tokens: _CountTokens
    modelplug_key_budget: _KeyBudget
