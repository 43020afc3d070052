"""The policy: retry the same model, then fall back along the chain, with cooldowns.

:class:`FallbackPolicy` is a plugin object: the package registers a default one through
its entry point, and a program may register its own (with its own options, store,
clock and sleep). Either way a re-opened stream skips every fallback policy on the
client (pluggy's ``subset_hook_caller``), so policies never nest.
"""

from __future__ import annotations

import asyncio
import random as _random
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from modelplug import (
    ConfigError,
    Embeddings,
    EmbedRequest,
    Event,
    Offer,
    Request,
    Route,
    TranscribeRequest,
    Transcript,
    find_policies,
    hookimpl,
)

from .attempts import NEVER_RETRY, UNBUILDABLE, Attempts
from .chain import chain_specs
from .cooldowns import SHARED
from .options import FallbackOptions, load_options
from .policy_protocol import POLICY_KIND, Sleep

if TYPE_CHECKING:
    from modelplug import CallContext, Settings
    from modelplug_kit import AnyCooldownStore

    from .sqlite_cooldowns import SqliteCooldowns

__all__ = ["FallbackPolicy", "choose_store", "close_sqlite_cooldowns", "default_policy"]

STORES_KIND = "stores"
"""What a plugin offering shared stores (modelplug-redis) is found by."""

FILE_NAME = "cooldowns.sqlite3"  # in the data directory (sqlite_cooldowns.FILE_NAME)
_FILES: dict[Path, SqliteCooldowns] = {}
_FILES_LOCK = threading.Lock()

HookWrapper = Generator[None, "AsyncIterator[Event] | None", "AsyncIterator[Event] | None"]
EmbedWrapper = Generator[None, "Awaitable[Embeddings] | None", "Awaitable[Embeddings] | None"]
TranscribeWrapper = Generator[None, "Awaitable[Transcript] | None", "Awaitable[Transcript] | None"]


class FallbackPolicy:
    """Retries, fallback chains and cooldowns for every provider's streams.

    :param options: ``[fallback]`` settings that win over the settings files
        (``retries``, ``budget``, ``cooldown_rate_limit``...).
    :param store: the cooldown table (default: what ``[fallback] store`` chooses: a
        stores plugin's, such as modelplug-redis when it is configured, else this
        machine's SQLite file).
    :param clock: a monotonic clock in seconds, for the retry budget.
    :param sleep: how to wait (``asyncio.sleep``; tests pass one that only records).
    :param random: a source of floats in [0, 1) for the jitter.
    """

    name = "modelplug-fallback"
    modelplug_policy = POLICY_KIND

    def __init__(
        self,
        options: Mapping[str, Any] | None = None,
        *,
        store: AnyCooldownStore | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self.overrides = dict(options or {})
        self.store: AnyCooldownStore | None = store
        self.clock = clock
        self.sleep = sleep
        self.random = random
        self._options_by_client: weakref.WeakKeyDictionary[
            CallContext, tuple[Settings, FallbackOptions]
        ] = weakref.WeakKeyDictionary()
        self._store_by_client: weakref.WeakKeyDictionary[CallContext, AnyCooldownStore] = (
            weakref.WeakKeyDictionary()
        )

    @hookimpl(wrapper=True, tryfirst=True)
    def modelplug_stream(self, route: Route, request: Request, client: CallContext) -> HookWrapper:
        return (yield from self.wrapper(route, request, client))

    @hookimpl(wrapper=True, tryfirst=True)
    def modelplug_embed(
        self, route: Route, request: EmbedRequest, client: CallContext
    ) -> EmbedWrapper:
        return (yield from self.embed_wrapper(route, request, client))

    @hookimpl(wrapper=True, tryfirst=True)
    def modelplug_transcribe(
        self, route: Route, request: TranscribeRequest, client: CallContext
    ) -> TranscribeWrapper:
        return (yield from self.transcribe_wrapper(route, request, client))

    @hookimpl
    def modelplug_close(self, client: CallContext) -> None:
        """Close the SQLite cooldowns file this policy's store for ``client`` may be (a
        store the program gave is the program's to close)."""
        close_sqlite_cooldowns(client)

    @hookimpl
    def modelplug_describe_route(
        self, route: Route, client: CallContext
    ) -> Awaitable[dict[str, Any]] | None:
        """For ``modelplug resolve``: the chain, its cooldowns, the retries, the store."""
        from .describe import describe_route

        return describe_route(self, route, client)

    def wrapper(self, route: Route, request: Request, client: CallContext) -> HookWrapper:
        """The body of a ``wrapper=True`` hook: take the provider's stream, wrap it.

        An error raised while the provider *opens* its stream (a missing key, say) is
        let through unless this policy can do something about it, so a call without
        a fallback chain fails exactly as it would without the plugin.
        """
        try:
            stream = yield
        except Exception as exc:
            if not self._takes_open_error(exc, route, client):
                raise
            return self.wrap(None, route, request, client, first_error=exc)
        if stream is None:
            return None
        return self.wrap(stream, route, request, client)

    def embed_wrapper(
        self, route: Route, request: EmbedRequest, client: CallContext
    ) -> EmbedWrapper:
        """The body of a ``wrapper=True`` ``modelplug_embed``: the provider's awaitable,
        retried and fallen back as a stream that failed before any output would be."""
        from .embed_attempts import embed_with_fallbacks

        try:
            waiting = yield
        except Exception as exc:
            if not self._takes_open_error(exc, route, client):
                raise
            return embed_with_fallbacks(self, route, request, client, None, exc)
        if waiting is None:
            return None
        return embed_with_fallbacks(self, route, request, client, waiting)

    def transcribe_wrapper(
        self, route: Route, request: TranscribeRequest, client: CallContext
    ) -> TranscribeWrapper:
        """The body of a ``wrapper=True`` ``modelplug_transcribe``: as
        :meth:`embed_wrapper`, for a transcription call."""
        from .embed_attempts import transcribe_with_fallbacks

        try:
            waiting = yield
        except Exception as exc:
            if not self._takes_open_error(exc, route, client):
                raise
            return transcribe_with_fallbacks(self, route, request, client, None, exc)
        if waiting is None:
            return None
        return transcribe_with_fallbacks(self, route, request, client, waiting)

    def wrap(
        self,
        stream: AsyncIterator[Event] | None,
        route: Route,
        request: Request,
        client: CallContext,
        *,
        first_error: Exception | None = None,
    ) -> AsyncIterator[Event]:
        """The stream the caller sees: ``stream`` (or ``first_error``) on ``route``,
        then retries and fallbacks as the options allow."""
        call = Attempts(self, self.options_for(client), route, request, client)
        return Offer(lambda offer: call.events(offer, stream, first_error))

    def options_for(self, client: CallContext) -> FallbackOptions:
        """This policy's options on ``client``, validated on the client's first call
        (and again only if its settings are replaced), not on every call."""
        cached = self._options_by_client.get(client)
        if cached is not None and cached[0] is client.settings:
            return cached[1]
        options = load_options(client.settings, self.overrides)
        self._options_by_client[client] = (client.settings, options)
        return options

    def store_for(self, client: CallContext) -> AnyCooldownStore:
        """The cooldown table on ``client``: the one this policy was given, else what
        ``[fallback] store`` chooses (by default: the one a stores plugin offers, such
        as modelplug-redis with ``[redis] url``, else this machine's SQLite file)."""
        if self.store is not None:
            return self.store
        found = self._store_by_client.get(client)
        if found is None:
            found = choose_store(client, self.options_for(client).store)
            self._store_by_client[client] = found
        return found

    def _takes_open_error(self, exc: Exception, route: Route, client: CallContext) -> bool:
        has_chain = bool(chain_specs(client.settings, route))
        if isinstance(exc, UNBUILDABLE):
            return has_chain
        error_class = client.classify(exc, route)
        if error_class.kind == "aborted":
            return False
        retries = self.options_for(client).retries
        retryable = error_class.retryable and error_class.kind not in NEVER_RETRY and retries > 0
        return retryable or (error_class.fallback and has_chain)

    def __repr__(self) -> str:
        return f"FallbackPolicy(options={self.overrides!r}, store={self.store!r})"


_DEFAULT: FallbackPolicy | None = None


def default_policy() -> FallbackPolicy:
    """The policy the entry point's hook uses: settings from ``[fallback]``, the
    cooldown table they choose, real time."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = FallbackPolicy()
    return _DEFAULT


def choose_store(client: CallContext, choice: str) -> AnyCooldownStore:
    """The store ``[fallback] store = choice`` names for ``client``."""
    if choice == "memory":
        return SHARED
    if choice in ("auto", "redis"):
        offered = shared_store(client)
        if offered is not None:
            return offered
        if choice == "redis":
            raise ConfigError(
                '[fallback] store = "redis": no Redis is set. Set [redis] url in your own '
                "settings file (or MODELPLUG_REDIS_URL) with modelplug-redis installed, or "
                'choose store = "sqlite" (this machine) or "memory" (this process)'
            )
    return sqlite_cooldowns(client.settings.data_dir() / FILE_NAME)


def close_sqlite_cooldowns(client: CallContext) -> None:
    """Close this process's connections to ``client``'s cooldowns file (``choose_store``
    gives every client of one data directory the same store); its next use opens them
    again."""
    with _FILES_LOCK:
        found = _FILES.get(client.settings.data_dir() / FILE_NAME) if _FILES else None
    if found is not None:
        found.close()


def sqlite_cooldowns(path: Path) -> SqliteCooldowns:
    """The process's one store for the file at ``path``."""
    from .sqlite_cooldowns import SqliteCooldowns

    with _FILES_LOCK:
        found = _FILES.get(path)
        if found is None:
            found = _FILES[path] = SqliteCooldowns(path)
        return found


def shared_store(client: CallContext) -> AnyCooldownStore | None:
    """A cooldown store offered by a stores plugin on ``client`` (None: none is
    configured)."""
    for plugin in find_policies(client, STORES_KIND):
        make = getattr(plugin, "cooldown_store", None)
        store = make(client) if make is not None else None
        if store is not None:
            return cast("AnyCooldownStore", store)
    return None
