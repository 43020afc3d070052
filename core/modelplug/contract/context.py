"""What a hook sees of the client that called it.

A hook is handed a :class:`CallContext`, never the concrete Client: the settings, the
other hooks' answers (price, classify, resolve), the shared HTTP clients of the running
event loop, and, for policies, the way to open the next stream or embedding call past
themselves. The Client implements it; a test can hand a hook anything that does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from modelplug.contract.errors import ErrorClass
    from modelplug.contract.held_text import HeldText
    from modelplug.contract.routes import ModelInfo, Provider, Route
    from modelplug.contract.settings import Settings
    from modelplug.contract.transcripts import TranscribeRequest, Transcript
    from modelplug.contract.types import (
        Cost,
        Embeddings,
        EmbedRequest,
        Event,
        Notice,
        Request,
        ToolSpec,
        Usage,
    )

__all__ = ["CallContext"]

T = TypeVar("T")


class CallContext(Protocol):
    """The few things a hook may use of the client that called it."""

    @property
    def settings(self) -> Settings:
        """The merged settings: keys (``api_key``), headers, plugins' tables."""
        ...

    def resolve(self, spec: str | None = None) -> Route:
        """The Route for a spec (an alias, a role, ``provider/model``)."""
        ...

    def price(self, route: Route, usage: Usage, price_factor: float = 1.0) -> Cost | None:
        """What ``usage`` cost on ``route``, from the pricing hooks; None when unknown."""
        ...

    def classify(self, error: BaseException, route: Route | None = None) -> ErrorClass:
        """The classification of a failure, from the classify hooks."""
        ...

    def async_http(self, key: str, factory: Callable[[], T]) -> T:
        """A shared HTTP client for the running event loop, made once by ``factory``
        under ``key`` and closed with the client."""
        ...

    def declared_providers(self) -> dict[str, list[tuple[Provider, str]]]:
        """Every provider name the plugins declare, with the declaring plugin."""
        ...

    def policies(self, kind: str) -> list[object]:
        """The policy plugins of ``kind`` registered on the client."""
        ...

    async def aprobe(self, spec: str | None = None) -> ModelInfo | None:
        """Ask the server behind ``spec`` what it serves (None: no plugin can probe it);
        a ModelError when the server does not answer (a policy's health check)."""
        ...

    async def alist_models(self, provider: str) -> list[str] | None:
        """The models the server behind ``provider`` lists now (None: no plugin can
        ask it); a ModelError when the server does not answer."""
        ...

    def open_stream(
        self, route: Route, request: Request, *, exclude: Sequence[object] = ()
    ) -> AsyncIterator[Event]:
        """The next stream for ``route``, skipping the plugins in ``exclude`` (a policy
        re-opening past itself)."""
        ...

    def open_embed(
        self, route: Route, request: EmbedRequest, *, exclude: Sequence[object] = ()
    ) -> Awaitable[Embeddings]:
        """The next embedding call for ``route``, skipping ``exclude``."""
        ...

    def open_transcribe(
        self, route: Route, request: TranscribeRequest, *, exclude: Sequence[object] = ()
    ) -> Awaitable[Transcript]:
        """The next transcription call for ``route``, skipping ``exclude``."""
        ...

    def tools_unsupported(
        self, route: Route, request: Request, *, said: str | None = None
    ) -> Notice | None:
        """The Notice for tools sent to a model that cannot call them, else None."""
        ...

    def held_text(self, tools: list[ToolSpec], mode: str | None) -> HeldText:
        """A reader of tool calls a model writes as text, for one reply."""
        ...
