"""The Client: resolve -> stream -> Done, cost attachment, errors, and sync facades.

Async first. The sync facades drive the same async code on a private event loop kept
per thread, handing over every event that is ready at once, so a stream pays one loop
round trip per network read rather than one per event. Inside a running event loop (a
Jupyter cell) they run on a background thread instead, so they never deadlock.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import warnings
import weakref
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterator,
    Mapping,
    Sequence,
)
from pathlib import Path
from queue import Queue
from typing import TYPE_CHECKING, Any, TypeVar

from .errors import ErrorClass, ModelError, ModelplugError, NoProviderError, UnknownProviderError
from .plugins import PluginHost, PluginInfo
from .routes import ModelInfo, Provider, Route
from .settings import (
    BUILTIN_ROLES,
    ModelplugWarning,
    Settings,
    load_settings,
    normalize_plugin_name,
)

if TYPE_CHECKING:
    import asyncio

    from .held_text import HeldText
    from .types import Cost, Event, Request, RequestLike, Response, ToolSpec, Usage
else:
    from ._lazy import lazy_module

    # asyncio costs tens of milliseconds to import and is needed only once a call runs.
    asyncio = lazy_module("asyncio")

__all__ = ["Client", "EventCallback"]

T = TypeVar("T")
# What complete(on_event=...) takes: called with every delta and notice as it arrives.
EventCallback = Callable[["Event"], None]
ECHO_NOTE = (
    "modelplug: no model chosen, so the built-in echo model answers. Choose one with "
    '-m provider/model, MODELPLUG_MODEL, or model = "provider/model" in your settings.'
)


class Client:
    """A modelplug client: a plugin host plus settings.

    :param model: the default model spec for calls that name none.
    :param plugins: plugin objects (modules or instances with ``@hookimpl`` functions) to
        register, whatever the toggles say.
    :param enable: plugin names that form an explicit allow-list (core's built-ins and
        the objects in ``plugins`` stay on).
    :param disable: plugin names to disable (the last word on toggles).
    :param settings: ready-made Settings (otherwise read from the files and environment).
    :param config: explicit settings (same keys as the TOML files); they win.
    :param user_config: the user's settings file (default: MODELPLUG_CONFIG or the
        platform's config directory).
    :param project_dir: where to look for the project file (default: the cwd).
    :param environ: the environment to read (default: ``os.environ``).
    :param entry_points: False loads no installed plugin (for tests).
    :param strict: make a plugin that fails to load fatal.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        plugins: Sequence[object] = (),
        enable: Sequence[str] | None = None,
        disable: Sequence[str] = (),
        settings: Settings | None = None,
        config: Mapping[str, Any] | None = None,
        user_config: Path | str | None = None,
        project_dir: Path | str | None = None,
        environ: Mapping[str, str] | None = None,
        entry_points: bool = True,
        strict: bool | None = None,
    ) -> None:
        self.settings = settings or load_settings(
            user_path=user_config, project_dir=project_dir, environ=environ, explicit=config
        )
        for plugin in plugins:
            if isinstance(plugin, str):
                raise TypeError(
                    f"Client(plugins=[...]) takes plugin objects, got the name {plugin!r}; "
                    f"pass names as Client(enable=[{plugin!r}]) or disable=[...]"
                )
        self.host = PluginHost(
            self.settings,
            explicit=plugins,
            enable=enable,
            disable=disable,
            entry_points=entry_points,
            strict=strict,
        )
        self.hook = self.host.hook
        self.default_model = model
        self._http: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Any]] = (
            weakref.WeakKeyDictionary()
        )
        self._local = threading.local()
        self._background: tuple[asyncio.AbstractEventLoop, threading.Thread] | None = None
        self._echo_noted = False
        self._declared: dict[str, list[tuple[Provider, str]]] | None = None
        self._warn_unknown_sections()

    # -- plugins ---------------------------------------------------------------------

    def register(self, plugin: object, name: str | None = None) -> PluginInfo:
        """Register a plugin object on this client."""
        self._declared = None
        return self.host.add(plugin, name)

    def unregister(self, plugin: object) -> None:
        self._declared = None
        self.host.remove(plugin)

    def plugins(self) -> list[PluginInfo]:
        """Every plugin known to this client, enabled or not, and why."""
        return self.host.listing()

    def providers(self) -> list[str]:
        """Every provider name the enabled plugins serve."""
        return sorted(self.declared_providers())

    def declared_providers(self) -> dict[str, list[tuple[Provider, str]]]:
        """Each provider name, with every (declaration, plugin name) that serves it, in
        the order core's rule ranks them: the first one serves the name unless the
        user's file pins a type (see :meth:`provider_type`)."""
        if self._declared is None:
            table: dict[str, list[tuple[Provider, str]]] = {}
            answers = self.host.call_each("modelplug_providers", {"settings": self.settings})
            for declared, plugin in answers:
                for entry in declared:
                    if not isinstance(entry, Provider):
                        raise TypeError(
                            f"the plugin {plugin!r} declared {entry!r} from "
                            "modelplug_providers; return modelplug.plugin.Provider records"
                        )
                    table.setdefault(entry.name, []).append((entry, plugin))
            for entries in table.values():
                entries.sort(key=lambda item: (not item[0].native, item[1]))
            self._declared = table
        return self._declared

    def provider_type(self, name: str) -> str | None:
        """The type a provider name has: the user's ``[providers.NAME] type``, else the
        first-ranked declaration's (native before generic, then by plugin name); None
        when nothing declares the name."""
        own = self.settings.providers.get(name)
        if own is not None:
            return own.type
        entries = self.declared_providers().get(name)
        return entries[0][0].type if entries else None

    def _warn_unknown_sections(self) -> None:
        known = {p.name for p in self.host.infos}
        known |= {normalize_plugin_name(p.name) for p in self.host.infos}
        known.add("http")  # core's own [http] table (modelplug.http_pool)
        for section in self.settings.options:
            if section not in known:
                warnings.warn(
                    f"unknown settings section [{section}]: no installed plugin is named "
                    f"{section!r} (installed: {', '.join(sorted(known))})",
                    ModelplugWarning,
                    stacklevel=3,
                )

    # -- resolution ------------------------------------------------------------------

    def choose_model(self, spec: str | None = None) -> str:
        """The spec to use: the argument, the client's default, MODELPLUG_MODEL, the
        project default, the user default, then the built-in echo model (with a note)."""
        chosen = spec or self.default_model or self.settings.model
        if chosen:
            return chosen
        if not self._echo_noted:
            print(ECHO_NOTE, file=sys.stderr)
            self._echo_noted = True
        return "echo"

    def expand(self, spec: str) -> tuple[str, str | None]:
        """Expand aliases and roles into a concrete spec. Returns (spec, role or None)."""
        roles = self.settings.roles
        aliases = self.settings.aliases
        role: str | None = None
        seen: list[str] = []
        current = spec
        while True:
            if current in seen:
                chain = " -> ".join([*seen, current])
                raise ModelplugError(
                    f"the aliases and roles form a cycle: {chain}; make one of them name a "
                    "provider/model spec"
                )
            seen.append(current)
            if current in roles or current in BUILTIN_ROLES:
                if role is not None:
                    raise ModelplugError(
                        f"the role {role!r} names the role {current!r}; a role must name a "
                        "provider/model spec, never another role"
                    )
                role = current
                # An unset role is the default model. A role naming a role is caught by
                # the check above on the next turn.
                current = roles.get(current) or self.choose_model()
                continue
            if current in aliases:
                current = aliases[current]
                continue
            return current, role

    def resolve(self, spec: str | None = None) -> Route:
        """Turn a spec, alias or role into a Route (no key in it)."""
        asked = self.choose_model(spec)
        concrete, role = self.expand(asked)
        provider_name, slash, _ = concrete.partition("/")
        provider_type = self.provider_type(provider_name) if slash else None
        found = self.host.call_first(
            "modelplug_resolve",
            {"spec": concrete, "settings": self.settings, "provider_type": provider_type},
        )
        route: Route | None = found[0]
        if route is None:
            provider = concrete.partition("/")[0] if "/" in concrete else None
            defined = self.settings.providers.get(provider or "")
            if defined is not None:
                raise UnknownProviderError(
                    concrete,
                    provider,
                    self.providers(),
                    note=f"the provider {provider!r} in your settings has type "
                    f"{defined.type!r}, which no enabled plugin serves",
                )
            raise UnknownProviderError(concrete, provider, self.providers())
        catalog: ModelInfo | None = self.host.call_first(
            "modelplug_model_info", {"route": route, "settings": self.settings}
        )[0]
        info = route.info if catalog is None else route.info.merged_over(catalog)
        override = self.settings.models.get(asked) or self.settings.model_settings(
            route.provider, route.model
        )
        if override is not None:
            user_info = ModelInfo(
                **{f.name: getattr(override, f.name) for f in dataclasses.fields(override)}
            )
            if override.price is not None:
                # A copy: a plugin changing its route's price must not change the settings.
                user_info.price = dataclasses.replace(override.price)
                user_info.price_source = "settings"
            info = user_info.merged_over(info)
        return dataclasses.replace(
            route, info=info, spec=asked, role=role, plugin=route.plugin or found[1]
        )

    async def aprobe(self, spec: str | None = None) -> ModelInfo | None:
        """Ask the server behind a route what it actually serves (None: cannot probe)."""
        route = self.resolve(spec)
        waiting: Awaitable[ModelInfo] | None = self.hook.modelplug_probe(route=route, client=self)
        if waiting is None:
            return None
        return await waiting

    def probe(self, spec: str | None = None) -> ModelInfo | None:
        return self._run_sync(self.aprobe(spec))

    # -- pricing and errors ----------------------------------------------------------

    def price(self, route: Route, usage: Usage, price_factor: float = 1.0) -> Cost | None:
        """The cost of ``usage`` on ``route``, or None when no table knows the model."""
        cost: Cost | None = self.host.call_first(
            "modelplug_price",
            {
                "route": route,
                "usage": usage,
                "price_factor": price_factor,
                "settings": self.settings,
            },
        )[0]
        return cost

    def classify(self, error: BaseException, route: Route | None = None) -> ErrorClass:
        """What kind of failure ``error`` is (a plugin's answer, else core's generic one)."""
        if isinstance(error, ModelError):
            return error.error_class
        result: ErrorClass | None = self.host.call_first(
            "modelplug_classify_error", {"error": error, "route": route}
        )[0]
        return result or ErrorClass(kind="other", reason=type(error).__name__)

    # -- helpers for plugins ---------------------------------------------------------

    def policies(self, kind: str) -> list[object]:
        """The policy plugins of ``kind`` on this client (see
        :func:`modelplug.plugin.find_policies`)."""
        return self.host.plugins_of_kind(kind)

    def stream_hook(self, exclude: Sequence[object] = ()) -> Any:
        """The ``modelplug_stream`` hook caller, skipping ``exclude`` (for policies that
        re-open a stream without passing through themselves again)."""
        if not exclude:
            return self.hook.modelplug_stream
        return self.host.hook_excluding("modelplug_stream", exclude)

    def open_stream(
        self, route: Route, request: Request, *, exclude: Sequence[object] = ()
    ) -> AsyncIterator[Event]:
        """Ask the plugins for a stream for ``route``; raises NoProviderError if none."""
        stream: AsyncIterator[Event] | None = self.stream_hook(exclude)(
            route=route, request=request, client=self
        )
        if stream is None:
            raise NoProviderError(
                f"no enabled plugin opens streams of type {route.endpoint.type!r} (the "
                f"provider {route.provider!r}); check `modelplug plugins` for a disabled "
                "or failed plugin"
            )
        return stream

    def held_text(self, tools: list[ToolSpec], mode: str | None) -> HeldText:
        """A HeldText for one reply (see :mod:`modelplug.held_text`)."""
        from .held_text import HeldText

        return HeldText(self.hook, tools, mode)

    def async_http(self, key: str, factory: Callable[[], T]) -> T:
        """A shared async HTTP client for the running event loop, made once by
        ``factory``; closed by :meth:`aclose`. Connection pools belong to one loop, so
        each loop gets its own."""
        loop = asyncio.get_running_loop()
        per_loop = self._http.setdefault(loop, {})
        if key not in per_loop:
            per_loop[key] = factory()
        client: T = per_loop[key]
        return client

    # -- async API -------------------------------------------------------------------

    def astream(
        self, spec: str | None = None, request: RequestLike | None = None, **fields: Any
    ) -> AsyncIterator[Event]:
        """Stream events: deltas, notices, then exactly one Done with the Response.

        :param spec: ``provider/model``, an alias or a role (None: the default model).
        :param request: a string, OpenAI-style messages, a dict or a Request.
        :param fields: Request fields to set (``max_tokens=...``, ``tools=[...]``).
        :raises RequestError: the request is invalid (before any network call).
        :raises ModelError: the call failed; carries the ErrorClass, route and partial.
        """
        from .calls import guarded_stream

        # The async generator itself, not a wrapper around it: no extra layer per event.
        return guarded_stream(self, spec, request, fields)

    async def acomplete(
        self,
        spec: str | None = None,
        request: RequestLike | None = None,
        *,
        on_event: EventCallback | None = None,
        **fields: Any,
    ) -> Response:
        """Run a call to the end and return its Response.

        :param on_event: called with every event (deltas and notices) as it arrives;
            without it, notices are logged on the ``modelplug`` logger as warnings.
        """
        from .calls import dispatch

        response: Response | None = None
        async for event in self.astream(spec, request, **fields):
            response = dispatch(event, on_event) or response
        assert response is not None  # astream ends with exactly one Done or raises
        return response

    # -- sync facades ----------------------------------------------------------------

    def stream(
        self, spec: str | None = None, request: RequestLike | None = None, **fields: Any
    ) -> Iterator[Event]:
        """The sync form of :meth:`astream`."""
        return self._iterate(lambda: self.astream(spec, request, **fields))

    def complete(
        self,
        spec: str | None = None,
        request: RequestLike | None = None,
        *,
        on_event: EventCallback | None = None,
        **fields: Any,
    ) -> Response:
        """The sync form of :meth:`acomplete`."""
        from .calls import dispatch

        response: Response | None = None
        for event in self.stream(spec, request, **fields):
            response = dispatch(event, on_event) or response
        assert response is not None
        return response

    def _loop(self) -> asyncio.AbstractEventLoop:
        loop: asyncio.AbstractEventLoop | None = getattr(self._local, "loop", None)
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
            self._local.loop = loop
            weakref.finalize(self, _close_loop, loop)
        return loop

    def _iterate(self, make: Callable[[], AsyncIterator[T]]) -> Iterator[T]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._iterate_here(make)
        return self._iterate_in_background(make)

    def _iterate_here(self, make: Callable[[], AsyncIterator[T]]) -> Iterator[T]:
        loop = self._loop()
        ready: list[T] = []
        # Holds the future the consumer waits on, only while it waits: the pump's check
        # per event is then one truth test.
        waiting: list[asyncio.Future[None]] = []
        outcome: list[BaseException | None] = [None]
        finished = [False]

        def wake() -> None:
            future = waiting.pop()
            if not future.done():
                future.set_result(None)

        async def pump() -> None:
            append = ready.append
            try:
                async for item in make():
                    append(item)
                    if waiting:
                        wake()
            except BaseException as exc:
                outcome[0] = exc
            finally:
                finished[0] = True
                if waiting:
                    wake()

        task = loop.create_task(pump())

        def generate() -> Iterator[T]:
            try:
                while True:
                    if ready:
                        # Hand over everything the last network read produced; the loop
                        # is stopped meanwhile, so nothing is appended while we yield.
                        batch = ready.copy()
                        ready.clear()
                        yield from batch
                        continue
                    if finished[0]:
                        break
                    future: asyncio.Future[None] = loop.create_future()
                    waiting.append(future)
                    loop.run_until_complete(future)
                error = outcome[0]
                if error is not None:
                    raise error.with_traceback(error.__traceback__)
            finally:
                if not task.done():
                    task.cancel()
                    try:
                        loop.run_until_complete(task)
                    except BaseException:
                        pass

        return generate()

    def _background_loop(self) -> asyncio.AbstractEventLoop:
        if self._background is None or not self._background[1].is_alive():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="modelplug-sync", daemon=True)
            thread.start()
            self._background = (loop, thread)
        return self._background[0]

    def _iterate_in_background(self, make: Callable[[], AsyncIterator[T]]) -> Iterator[T]:
        loop = self._background_loop()
        queue: Queue[tuple[str, Any]] = Queue()

        async def pump() -> None:
            try:
                async for item in make():
                    queue.put(("item", item))
            except BaseException as exc:
                queue.put(("error", exc))
            else:
                queue.put(("end", None))

        future = asyncio.run_coroutine_threadsafe(pump(), loop)

        def generate() -> Iterator[T]:
            try:
                while True:
                    kind, value = queue.get()
                    if kind == "item":
                        yield value
                    elif kind == "error":
                        raise value
                    else:
                        return
            finally:
                if not future.done():
                    future.cancel()

        return generate()

    def _run_sync(self, awaitable: Awaitable[T]) -> T:
        async def wrap() -> AsyncIterator[T]:
            yield await awaitable

        for value in self._iterate(wrap):
            return value
        raise RuntimeError("unreachable")  # pragma: no cover

    # -- lifecycle -------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the HTTP clients plugins opened on the running loop."""
        loop = asyncio.get_running_loop()
        for http in self._http.pop(loop, {}).values():
            closer = getattr(http, "aclose", None)
            if closer is not None:
                await closer()

    def close(self) -> None:
        """Close this thread's private loop, its HTTP clients and the background loop."""
        loop: asyncio.AbstractEventLoop | None = getattr(self._local, "loop", None)
        if loop is not None and not loop.is_closed():
            loop.run_until_complete(self.aclose())
            loop.close()
        if self._background is not None:
            bg_loop, thread = self._background
            asyncio.run_coroutine_threadsafe(self.aclose(), bg_loop).result(timeout=10)
            bg_loop.call_soon_threadsafe(bg_loop.stop)
            thread.join(timeout=10)
            self._background = None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        enabled = [p.name for p in self.host.infos if p.enabled]
        return f"Client(model={self.default_model!r}, plugins={enabled})"


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    if not loop.is_closed() and not loop.is_running():
        loop.close()
