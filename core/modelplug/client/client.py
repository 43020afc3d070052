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

from modelplug.client.call_habits import SDK_BASE_URLS
from modelplug.client.counting import UncountableRoutes
from modelplug.client.key_budgets import BudgetSources
from modelplug.client.probe_cache import ProbeCache, probed_over
from modelplug.contract.errors import (
    ConfigError,
    ErrorClass,
    ModelError,
    ModelplugError,
    NoProviderError,
    UnknownProviderError,
)
from modelplug.contract.routes import ModelInfo, Price, Provider, Route
from modelplug.contract.settings import BUILTIN_ROLES, Settings, normalize_plugin_name, warn
from modelplug.host.plugins import PluginHost, PluginInfo
from modelplug.host.settings import load_settings

if TYPE_CHECKING:
    import asyncio

    from modelplug.client.calls import EventCallback
    from modelplug.client.served_models import Served
    from modelplug.contract.held_text import HeldText
    from modelplug.contract.observers import RetryCallback, UsageCallback
    from modelplug.contract.repetition import RepetitionDetector, RepetitionGuard
    from modelplug.contract.transcripts import TranscribeRequest, Transcript
    from modelplug.contract.types import (
        Cost,
        Embeddings,
        EmbedRequest,
        Event,
        KeyBudget,
        Notice,
        Request,
        RequestLike,
        Response,
        ToolSpec,
        Usage,
    )
else:
    from modelplug.host.lazy import lazy_module

    # asyncio costs tens of milliseconds to import and is needed only once a call runs.
    asyncio = lazy_module("asyncio")

__all__ = ["Client"]

T = TypeVar("T")
# What complete(on_event=...) takes: called with every delta and notice as it arrives.
# The sync facade hands events over in batches of at most this many. A network read
# can complete hundreds of events; were they all held for the consumer at once, every
# batch would survive a young-generation garbage collection and be traversed again in
# the older ones. Each hand-over costs a loop round trip (~15 us), so the batch is as
# large as stays under the collector's threshold (700 new objects) beside a read's
# framed events (two tracked objects per delta: the model and its fields set).
# Measured in instructions per event (bench/stream_instructions.py, 2026-12-07): 128
# is the least, on Chat Completions and Ollama alike; 256 costs 0.9% more, 64 1.9%.
HANDOVER = 128
ECHO_NOTE = (
    "modelplug: no model chosen, so the built-in echo model answers. Choose one with "
    '-m provider/model, MODELPLUG_MODEL, or model = "provider/model" in your settings.'
)


# Every Client not yet collected, so that one left open is closed at exit (see
# _close_open_clients); weak, so this never keeps one alive.
_open_clients: weakref.WeakSet[Client] = weakref.WeakSet()
_exit_hook: list[bool] = []


def _close_open_clients() -> None:
    """Close every Client left open, at interpreter exit while imports still work.

    Otherwise what a Client holds (its loops, their pooled connections, a failed
    stream's generators kept alive by the traceback Python printed) is finalized during
    the interpreter's teardown, where running a loop fails with "sys.meta_path is None".
    """
    for client in list(_open_clients):
        try:
            client.close()
        except Exception:  # closing at exit, best effort and quiet
            pass


def _track(client: Client) -> None:
    if not _exit_hook:
        import atexit

        atexit.register(_close_open_clients)
        _exit_hook.append(True)
    _open_clients.add(client)


class Client:
    """A modelplug client: a plugin host plus settings.

    Close it when done (``with Client() as client:``, or :meth:`close`; ``async with``
    and :meth:`aclose` for the loop you run); one left open is closed at interpreter
    exit.

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
    :param on_retry: called with a RetryEvent at each retry wait a policy makes, and once
        more when the call recovers or the policy gives up (plain or ``async``; see
        :mod:`modelplug.contract.observers`). Every call of this client reports to it,
        before a call's own ``on_retry``.
    :param on_usage: called with a UsageEvent (usage, cost, route) when a call finishes,
        for every call of this client, before a call's own ``on_usage``. A callback
        that raises is logged as a warning and the call goes on.
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
        on_retry: RetryCallback | None = None,
        on_usage: UsageCallback | None = None,
    ) -> None:
        self.on_retry = on_retry
        self.on_usage = on_usage
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
        # Each thread's private loop for the sync API, as a _ThreadLoop in a _ThreadSlot:
        # a thread that ends drops its slot, which releases its loop; the weak set lets
        # close() reach every thread's.
        self._local = threading.local()
        self._thread_loops: weakref.WeakSet[_ThreadLoop] = weakref.WeakSet()
        self._thread_loops_lock = threading.Lock()
        self._background: tuple[asyncio.AbstractEventLoop, threading.Thread] | None = None
        self._echo_noted = False
        self._checked_tables: set[str] = set()
        self._noted_variables: set[str] = set()
        self._declared: dict[str, list[tuple[Provider, str]]] | None = None
        self._probes: ProbeCache | None = None
        self._uncountable = UncountableRoutes()
        self._budget_sources = BudgetSources()
        self._warn_unknown_sections()
        _track(self)

    # -- plugins ---------------------------------------------------------------------

    def register(self, plugin: object, name: str | None = None) -> PluginInfo:
        """Register a plugin object on this client."""
        self._declared = None
        return self.host.add(plugin, name)

    def unregister(self, plugin: object) -> None:
        """Remove a plugin registered on this client (its hooks stop being called)."""
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
                            "modelplug_providers; return modelplug.Provider records"
                        )
                    table.setdefault(entry.name, []).append((entry, plugin))
            for entries in table.values():
                entries.sort(key=lambda item: (not item[0].native, item[1]))
            self._declared = table
        return self._declared

    def provider_types(self) -> list[str]:
        """Every provider type the enabled plugins serve (what ``[providers.NAME] type``
        may say), sorted."""
        declared = self.declared_providers().values()
        return sorted({entry.type for entries in declared for entry, _ in entries})

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
        known.add("http")  # core's own [http] table (modelplug.host.http_options)
        known |= self.host.declared_sections()
        for section in self.settings.options:
            if section not in known:
                warn(
                    f"unknown settings section [{section}]: no installed plugin is named "
                    f"{section!r} (installed: {', '.join(sorted(known))})",
                    where=self.settings.source_of(section),
                    stacklevel=3,
                )

    # -- resolution ------------------------------------------------------------------

    def choose_model(self, spec: str | None = None) -> str:
        """The spec to use: the argument, the client's default, MODELPLUG_MODEL, the
        project default, the user default, then the built-in echo model (with a note)."""
        chosen = spec or self.default_model or self.settings.model
        return chosen or self._echo()

    def _echo(self) -> str:
        """The built-in echo model, noted on stderr the first time it stands in."""
        if not self._echo_noted:
            print(ECHO_NOTE, file=sys.stderr)
            self._echo_noted = True
        return "echo"

    def _default_besides(self, seen: list[str]) -> str:
        """The default model for an unset role, skipping the names already expanded:
        ``Client("worker")`` makes "worker" the client's default, and the role must not
        fall back to itself."""
        for chosen in (self.default_model, self.settings.model):
            if chosen and chosen not in seen:
                return chosen
        return self._echo()

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
                current = roles.get(current) or self._default_besides(seen)
                continue
            if current in aliases:
                current = aliases[current]
                continue
            return current, role

    def resolve(self, spec: str | None = None) -> Route:
        """Turn a spec, alias or role into a Route (no key in it)."""
        return self._resolve(spec, None)

    def route_for(self, spec: str | Route | None) -> Route:
        """The route a call goes to: ``spec`` itself when it is already a Route (one
        resolved earlier and kept by the caller), else :meth:`resolve`'s answer."""
        if isinstance(spec, Route):
            return spec
        return self._resolve(spec, None)

    def _resolve(self, spec: str | None, sources: dict[str, str] | None) -> Route:
        """:meth:`resolve`, noting in ``sources`` (when given) who said the route's
        context window and max output: the user's settings, the provider plugin or the
        catalog plugin (for ``modelplug models``)."""
        asked = _checked_spec(self.choose_model(spec))
        concrete, role = self.expand(asked)
        concrete = _placed(_checked_spec(concrete))
        provider_name, slash, model = concrete.partition("/")
        if slash and not model:
            from modelplug.client.served_models import example_model

            example = example_model(self, provider_name)
            raise ConfigError(
                f"the spec {concrete!r} names no model; write {provider_name}/<model id>, "
                f"e.g. {provider_name}/{example}"
            )
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
                types = self.provider_types()
                raise UnknownProviderError(
                    concrete,
                    provider,
                    self.providers(),
                    note=f"the provider {provider!r} in your settings "
                    f"({self.settings.source_of('providers')}) has type {defined.type!r}, "
                    f"which no enabled plugin serves{_did_you_mean(defined.type, types)}",
                    types=types,
                )
            raise UnknownProviderError(
                concrete, provider, self.providers(), hint=self._install_hint(provider)
            )
        if route.provider in self.settings.providers:
            self._check_provider_table(route.provider)
        if route.endpoint.api_key_env in SDK_BASE_URLS:
            self._note_ignored_base_url(route)
        catalog, cataloger = self.host.call_first(
            "modelplug_model_info", {"route": route, "settings": self.settings}
        )
        info = route.info if catalog is None else route.info.merged_over(catalog)
        if route.endpoint.local and route.info.price is None:
            # A server on this machine costs nothing, whatever its model's name costs
            # elsewhere; only its plugin's price or the user's (below) says otherwise.
            info = dataclasses.replace(info, price=Price.free(), price_source="local (free)")
        # What the server said when probed, over what plugins assume; under the user's.
        probed = self.probe_cache().get(route)
        if probed is not None:
            info = probed_over(info, *probed)
        override = self.settings.models.get(asked) or self.settings.model_settings(
            route.provider, route.model
        )
        if sources is not None:
            layers = [
                (override, f"settings ({self.settings.source_of('models')})"),
                (probed[0] if probed else None, "a probe of the server"),
                (route.info, route.plugin or found[1] or "the provider plugin"),
                (catalog, cataloger or "a catalog plugin"),
            ]
            for name in ("context_window", "max_output_tokens"):
                said = next((who for has, who in layers if getattr(has, name, None)), None)
                if said is not None:
                    sources[name] = said
        if override is not None:
            user_info = ModelInfo(
                **{f.name: getattr(override, f.name) for f in dataclasses.fields(override)}
            )
            if override.price is not None:
                # A copy: a plugin changing its route's price must not change the settings.
                user_info.price = dataclasses.replace(override.price)
                user_info.price_source = "settings"
            info = user_info.merged_over(info)
        if info.context_window is not None:
            said = _window_said(override, probed, route.info, route.plugin or found[1], cataloger)
            if said != info.context_window_source:
                info = dataclasses.replace(info, context_window_source=said)
        return dataclasses.replace(
            route, info=info, spec=asked, role=role, plugin=route.plugin or found[1]
        )

    def _note_ignored_base_url(self, route: Route) -> None:
        """Warn, once per variable, that an SDK's base-URL variable is not read (see
        :func:`modelplug.client.call_habits.ignored_base_url`)."""
        from modelplug.client.call_habits import ignored_base_url, ignored_base_url_warning

        variable = ignored_base_url(self.settings, route)
        if variable is None or variable in self._noted_variables:
            return
        self._noted_variables.add(variable)
        warn(ignored_base_url_warning(variable, route, self.settings.user_path), stacklevel=4)

    def _check_provider_table(self, provider: str) -> None:
        """The user's ``[providers.NAME]`` keys beyond core's, against what the serving
        type declares (once per name: a warning is worth one line, not one per call)."""
        if provider in self._checked_tables:
            return
        from modelplug.host.provider_table import check_provider_table

        own = self.settings.providers[provider]
        declared = next(
            (d for d, _ in self.declared_providers().get(provider, []) if d.type == own.type),
            None,
        )
        check_provider_table(self.settings, provider, declared)
        self._checked_tables.add(provider)

    def _install_hint(self, provider: str | None) -> str | None:
        """What to do about a provider nothing serves: the plugin that would serve it is
        installed but off (and why), or which distribution to install."""
        from modelplug.host.known_providers import KNOWN_PROVIDERS

        known = KNOWN_PROVIDERS.get(provider or "")
        if known is None:
            return None
        infos = {info.name: info for info in self.host.infos}
        for distribution in known.distributions:
            info = infos.get(distribution)
            if info is not None and not info.enabled:
                return (
                    f"Its plugin {distribution} is installed but off ({info.reason}); "
                    f"enable it there, or check `modelplug plugins`."
                )
        listing = ", ".join(self.providers()) or "none"
        install = " or ".join(f"pip install {d}" for d in known.distributions)
        return (
            f"Installed providers: {listing}. Install the plugin that serves it ({install}), "
            f"then use e.g. {provider}/{known.example}."
        )

    async def aprobe(self, spec: str | None = None) -> ModelInfo | None:
        """Ask the server behind a route what it actually serves (None: cannot probe).
        The answer is kept: later resolves of the route, in this process and the next,
        use it (:mod:`modelplug.client.probe_cache`)."""
        route = self.resolve(spec)
        waiting: Awaitable[ModelInfo] | None = self.hook.modelplug_probe(route=route, client=self)
        if waiting is None:
            return None
        failure: ModelplugError | None = None
        try:
            info = await waiting
        except ModelplugError as exc:
            failure = exc
        else:
            if info is not None:
                self.probe_cache().put(route, info)
            return info
        # Raised here, not in the except block, so it does not chain the raw original.
        from modelplug.client.calls import clean_error

        raise clean_error(failure)

    def probe(self, spec: str | None = None) -> ModelInfo | None:
        """The sync form of :meth:`aprobe`."""
        return self._run_sync(self.aprobe(spec))

    async def alist_models(self, provider: str) -> list[str] | None:
        """The models the server behind ``provider`` serves now, as it lists them
        (``provider/<id>`` takes each); None when no plugin can ask it. A server that
        cannot be reached raises the plugin's ModelError."""
        from modelplug.client.served_models import example_model

        route = self.resolve(f"{provider}/{example_model(self, provider, 'any')}")
        waiting: Awaitable[list[str]] | None = self.hook.modelplug_list_models(
            route=route, client=self
        )
        if waiting is None:
            return None
        failure: ModelplugError | None = None
        try:
            return list(await waiting)
        except ModelplugError as exc:
            failure = exc
        # Raised here, not in the except block, so it does not chain the raw original.
        from modelplug.client.calls import clean_error

        raise clean_error(failure)

    def list_models(self, provider: str) -> list[str] | None:
        """The sync form of :meth:`alist_models`."""
        return self._run_sync(self.alist_models(provider))

    async def aserved_models(self, timeout: float | None = None) -> dict[str, Served]:
        """What the servers of this machine and the user's own providers serve now, all
        asked at once, each for ``timeout`` seconds at most (see
        :mod:`modelplug.client.served_models`): per provider whose plugin can ask, the models
        its server lists, or why it did not answer."""
        from modelplug.client.served_models import LIST_TIMEOUT, ask_servers, askable_providers

        wait = LIST_TIMEOUT if timeout is None else timeout
        return await ask_servers(self, askable_providers(self), wait)

    def served_models(self, timeout: float | None = None) -> dict[str, Served]:
        """The sync form of :meth:`aserved_models`."""
        return self._run_sync(self.aserved_models(timeout))

    def probe_cache(self) -> ProbeCache:
        """The probe answers later resolves use (:mod:`modelplug.client.probe_cache`)."""
        if self._probes is None:
            self._probes = ProbeCache(self.settings.data_dir())
        return self._probes

    # -- counting before sending (modelplug.client.counting) ---------------------------

    async def acount_tokens(self, spec: str | Route | None, text: str) -> int | None:
        """The exact number of tokens ``text`` alone becomes for the route's model (its
        tokenizer, no chat template), or None when the endpoint cannot count it (a fact,
        not an error: estimate instead). A failure to reach a counting endpoint is None
        too, for this call only."""
        from modelplug.client.counting import count_on_route

        route = self.route_for(spec)
        return await count_on_route(self.hook, self, route, text, self._uncountable)

    def count_tokens(self, spec: str | Route | None, text: str) -> int | None:
        """The sync form of :meth:`acount_tokens`."""
        return self._run_sync(self.acount_tokens(spec, text))

    async def acount_prompt(
        self,
        spec: str | Route | None,
        messages: RequestLike | None = None,
        *,
        system: str | None = None,
        tools: Sequence[Any] | None = None,
    ) -> int | None:
        """The exact number of input tokens the route's model would read for this prompt
        (system, messages and tools, rendered as its server renders them), or None when
        the endpoint cannot count it; as :meth:`acount_tokens` otherwise.

        :param messages: a string, OpenAI-style messages, a dict or a Request.
        """
        from modelplug.client.calls import coerce_request
        from modelplug.client.counting import count_on_route

        fields: dict[str, Any] = {}
        if system is not None:
            fields["system"] = system
        if tools is not None:
            fields["tools"] = list(tools)
        request = coerce_request(messages, fields, client=self, spec=spec)
        route = self.route_for(spec)
        return await count_on_route(self.hook, self, route, request, self._uncountable)

    def count_prompt(
        self,
        spec: str | Route | None,
        messages: RequestLike | None = None,
        *,
        system: str | None = None,
        tools: Sequence[Any] | None = None,
    ) -> int | None:
        """The sync form of :meth:`acount_prompt`."""
        return self._run_sync(self.acount_prompt(spec, messages, system=system, tools=tools))

    # -- what an endpoint can tell (modelplug.client.key_budgets) ------------------------

    async def akey_budget(self, spec: str | Route | None) -> KeyBudget:
        """The spend, limit and reset of the key the route sends, as its endpoint states
        them (LiteLLM's ``/key/info``, OpenRouter's ``/api/v1/key``, the modelplug
        gateway's ``/key/info``), in the currency the source names.

        The first call probes, each endpoint with a short bounded timeout, and the
        answer is remembered per base URL and key; later calls make one request.
        Raises :class:`~modelplug.NoKeyBudgetError` when the endpoint exposes no key
        budget (remembered), and the plugin's ModelError when it could not be reached
        (not remembered: the next call probes again)."""
        from modelplug.client.key_budgets import read_key_budget

        route = self.route_for(spec)
        return await read_key_budget(self.hook, self, route, self._budget_sources)

    def key_budget(self, spec: str | Route | None) -> KeyBudget:
        """The sync form of :meth:`akey_budget`."""
        return self._run_sync(self.akey_budget(spec))

    async def athinking_budget(
        self,
        spec: str | Route | None,
        messages: RequestLike | None = None,
        *,
        system: str | None = None,
        tools: Sequence[Any] | None = None,
        reserve: int | None = None,
        max_tokens: int | None = None,
    ) -> int | None:
        """The thinking budget this prompt leaves on the route: its stated context window
        (a probe's or the settings'; a hosted model's documented one) less the prompt as
        the server counts it less ``reserve`` (default ``reasoning_reserve`` of the
        settings, else :data:`~modelplug.contract.budget.DEFAULT_REASONING_RESERVE`),
        within ``max_tokens`` or the model's output limit. None when that cannot be
        known: send no budget then (see :func:`modelplug.reasoning_budget`)."""
        from modelplug.client.auto_budget import known_window
        from modelplug.contract.budget import DEFAULT_REASONING_RESERVE, reasoning_budget

        route = self.route_for(spec)
        window = known_window(route)
        if window is None:
            return None
        counted = await self.acount_prompt(route, messages, system=system, tools=tools)
        if reserve is None:
            reserve = self.settings.reasoning_reserve
        cap = max_tokens or route.info.max_output_tokens
        return reasoning_budget(
            window,
            counted,
            DEFAULT_REASONING_RESERVE if reserve is None else reserve,
            output_cap=cap,
        )

    def thinking_budget(
        self,
        spec: str | Route | None,
        messages: RequestLike | None = None,
        *,
        system: str | None = None,
        tools: Sequence[Any] | None = None,
        reserve: int | None = None,
        max_tokens: int | None = None,
    ) -> int | None:
        """The sync form of :meth:`athinking_budget`."""
        return self._run_sync(
            self.athinking_budget(
                spec, messages, system=system, tools=tools, reserve=reserve, max_tokens=max_tokens
            )
        )

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
        :func:`modelplug.find_policies`)."""
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

    def embed_hook(self, exclude: Sequence[object] = ()) -> Any:
        """The ``modelplug_embed`` hook caller, skipping ``exclude`` (for policies that
        re-send an embedding call without passing through themselves again)."""
        if not exclude:
            return self.hook.modelplug_embed
        return self.host.hook_excluding("modelplug_embed", exclude)

    def open_embed(
        self, route: Route, request: EmbedRequest, *, exclude: Sequence[object] = ()
    ) -> Awaitable[Embeddings]:
        """Ask the plugins to embed on ``route``; NoProviderError if none does."""
        waiting: Awaitable[Embeddings] | None = self.embed_hook(exclude)(
            route=route, request=request, client=self
        )
        if waiting is None:
            raise NoProviderError(
                f"{route.provider} does not offer embeddings through any enabled plugin "
                f"(no plugin embeds routes of type {route.endpoint.type!r}); embed with "
                "an openai/, gemini/ or ollama/ model or an OpenAI-compatible server's, "
                "and check `modelplug plugins` for a disabled or failed plugin"
            )
        return waiting

    def open_transcribe(
        self, route: Route, request: TranscribeRequest, *, exclude: Sequence[object] = ()
    ) -> Awaitable[Transcript]:
        """Ask the plugins to transcribe on ``route``; NoProviderError if none does."""
        hook = (
            self.host.hook_excluding("modelplug_transcribe", exclude)
            if exclude
            else self.hook.modelplug_transcribe
        )
        waiting: Awaitable[Transcript] | None = hook(route=route, request=request, client=self)
        if waiting is None:
            raise NoProviderError(
                f"{route.provider} does not transcribe speech through any enabled plugin "
                f"(no plugin transcribes for routes of type {route.endpoint.type!r}); use "
                "an openai/, gemini/ or OpenAI-compatible server's model, and check "
                "`modelplug plugins` for a disabled or failed plugin"
            )
        return waiting

    def tools_unsupported(
        self, route: Route, request: Request, *, said: str | None = None
    ) -> Notice | None:
        """The Notice for a request whose tools the model cannot call (see
        :mod:`modelplug.client.tool_support`): core yields it before every call where the
        route's info says ``supports_tools = False``; a plugin that learns it otherwise
        (Ollama's capabilities) yields it with ``said`` naming what it learnt."""
        from modelplug.client.tool_support import tools_unsupported

        return tools_unsupported(self, route, request, said=said)

    def repetition_detector(
        self, route: Route, request: Request, guard: RepetitionGuard
    ) -> RepetitionDetector | None:
        """The detector that watches one call's stream for a loop: a plugin's, else
        core's (:func:`~modelplug.contract.hookspecs.modelplug_repetition_detector`)."""
        return self.hook.modelplug_repetition_detector(
            route=route, request=request, guard=guard, client=self
        )

    def held_text(self, tools: list[ToolSpec], mode: str | None) -> HeldText:
        """A HeldText for one reply (see :mod:`modelplug.contract.held_text`)."""
        from modelplug.contract.held_text import HeldText

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
        self,
        spec: str | Route | None = None,
        request: RequestLike | None = None,
        *,
        on_retry: RetryCallback | None = None,
        on_usage: UsageCallback | None = None,
        **fields: Any,
    ) -> AsyncIterator[Event]:
        """Stream events: deltas, notices, then exactly one Done with the Response.

        :param spec: ``provider/model``, an alias or a role (None: the default model), or
            a Route from :meth:`resolve` kept for many calls: it is used as it is, not
            resolved again (a program that calls one model often skips the resolving;
            it sees a change of settings, environment or probe only when it resolves
            anew).
        :param request: a string, OpenAI-style messages, a dict or a Request.
        :param fields: Request fields to set (``max_tokens=...``, ``tools=[...]``).
        :param on_retry: called with this call's RetryEvents, after the client's.
        :param on_usage: called with this call's UsageEvent, after the client's.
        :raises RequestError: the request is invalid (before any network call).
        :raises TruncatedToolCallError: the output limit cut a tool call (not retryable;
            the Response so far is its ``partial``).
        :raises ModelError: the call failed; carries the ErrorClass, route and partial.
        """
        from modelplug.client.calls import guarded_stream

        observers = None
        if on_retry or on_usage or self.on_retry or self.on_usage:
            from modelplug.client.observers import Observers

            observers = Observers.of((self.on_retry, on_retry), (self.on_usage, on_usage))
        # The async generator itself, not a wrapper around it: no extra layer per event.
        return guarded_stream(self, spec, request, fields, observers)

    async def acomplete(
        self,
        spec: str | Route | None = None,
        request: RequestLike | None = None,
        *,
        on_event: EventCallback | None = None,
        on_retry: RetryCallback | None = None,
        on_usage: UsageCallback | None = None,
        **fields: Any,
    ) -> Response:
        """Run a call to the end and return its Response.

        :param on_event: called with every event (deltas and notices) as it arrives;
            without it, notices are logged on the ``modelplug`` logger as warnings.
        :param on_retry: called with each RetryEvent of this call (see :meth:`astream`).
        :param on_usage: called with this call's UsageEvent (see :meth:`astream`).
        """
        from modelplug.client.calls import dispatch

        response: Response | None = None
        stream = self.astream(spec, request, on_retry=on_retry, on_usage=on_usage, **fields)
        async for event in stream:
            response = dispatch(event, on_event) or response
        assert response is not None  # astream ends with exactly one Done or raises
        return response

    async def aembed(
        self,
        spec: str | Route | None = None,
        inputs: str | Sequence[str] = (),
        *,
        dimensions: int | None = None,
        **fields: Any,
    ) -> Embeddings:
        """Embed texts: one vector per input, in their order.

        :param spec: ``provider/model``, an alias or a role (None: the default model), or
            a Route from :meth:`resolve` (used as it is, as in :meth:`astream`).
        :param inputs: a str (one vector) or a list of str.
        :param dimensions: the vector size to ask for, where the model can shorten them.
        :param fields: EmbedRequest fields: ``extra={...}`` for provider fields.
        :raises RequestError: the inputs are invalid (before any network call).
        :raises NoProviderError: the route's provider offers no embeddings.
        :raises ModelError: the call failed; carries the ErrorClass and route.
        """
        from modelplug.client.embed_call import guarded_embed

        return await guarded_embed(self, spec, inputs, dimensions, fields)

    async def atranscribe(
        self,
        spec: str | Route | None = None,
        audio: bytes = b"",
        *,
        filename: str = "audio.wav",
        **fields: Any,
    ) -> Transcript:
        """Turn speech into text.

        :param spec: ``provider/model``, an alias or a role (None: the default model), or
            a Route from :meth:`resolve`.
        :param audio: the bytes of an audio file (wav, mp3, m4a, ogg, flac, webm...).
        :param filename: the file's name: its extension tells the server the container.
        :param fields: ``language`` (ISO-639-1), ``prompt`` (words to expect),
            ``temperature``, and ``extra={...}`` for provider fields.
        :raises RequestError: the request is invalid (before any network call).
        :raises NoProviderError: the route's provider transcribes nothing.
        :raises ModelError: the call failed; carries the ErrorClass and route.
        """
        from modelplug.client.transcribe_call import guarded_transcribe

        return await guarded_transcribe(self, spec, audio, filename, fields)

    # -- sync facades ----------------------------------------------------------------

    def stream(
        self,
        spec: str | Route | None = None,
        request: RequestLike | None = None,
        *,
        on_retry: RetryCallback | None = None,
        on_usage: UsageCallback | None = None,
        **fields: Any,
    ) -> Iterator[Event]:
        """The sync form of :meth:`astream`."""
        return self._iterate(
            lambda: self.astream(spec, request, on_retry=on_retry, on_usage=on_usage, **fields)
        )

    def complete(
        self,
        spec: str | Route | None = None,
        request: RequestLike | None = None,
        *,
        on_event: EventCallback | None = None,
        on_retry: RetryCallback | None = None,
        on_usage: UsageCallback | None = None,
        **fields: Any,
    ) -> Response:
        """The sync form of :meth:`acomplete`."""
        from modelplug.client.calls import dispatch

        response: Response | None = None
        for event in self.stream(spec, request, on_retry=on_retry, on_usage=on_usage, **fields):
            response = dispatch(event, on_event) or response
        assert response is not None
        return response

    def embed(
        self,
        spec: str | Route | None = None,
        inputs: str | Sequence[str] = (),
        *,
        dimensions: int | None = None,
        **fields: Any,
    ) -> Embeddings:
        """The sync form of :meth:`aembed`."""
        return self._run_sync(self.aembed(spec, inputs, dimensions=dimensions, **fields))

    def transcribe(
        self,
        spec: str | Route | None = None,
        audio: bytes = b"",
        *,
        filename: str = "audio.wav",
        **fields: Any,
    ) -> Transcript:
        """The sync form of :meth:`atranscribe`."""
        return self._run_sync(self.atranscribe(spec, audio, filename=filename, **fields))

    def _thread_loop(self) -> _ThreadLoop:
        slot: _ThreadSlot | None = getattr(self._local, "slot", None)
        own = slot.own if slot is not None else None
        if own is None or own.loop.is_closed() or own.closing:
            loop = asyncio.new_event_loop()
            own = _ThreadLoop(loop, self._http.setdefault(loop, {}))
            # The slot is referenced by the thread-local only (never by a frame that a
            # traceback could keep), so it goes, and releases the loop, with its thread.
            self._local.slot = _ThreadSlot(own)
            with self._thread_loops_lock:
                self._thread_loops.add(own)
        return own

    def _iterate(self, make: Callable[[], AsyncIterator[T]]) -> Iterator[T]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._iterate_here(make)
        return self._iterate_in_background(make)

    def _iterate_here(self, make: Callable[[], AsyncIterator[T]]) -> Iterator[T]:
        own = self._thread_loop()
        loop = own.loop
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
            append, handover = ready.append, HANDOVER
            try:
                async for item in make():
                    append(item)
                    if waiting:
                        wake()
                    elif len(ready) >= handover:
                        # Let the consumer take these before reading on (see HANDOVER).
                        await _yield_to_loop()
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
                if own.closing:
                    # close() ran on another thread during this call.
                    own.release()

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
        """Close the HTTP clients plugins opened on the running loop, then what plugins
        hold open for this client outside a loop (their SQLite stores:
        :func:`~modelplug.contract.hookspecs.modelplug_close`)."""
        loop = asyncio.get_running_loop()
        # Emptied in place, not dropped: a thread's _ThreadLoop holds this same dict and
        # must see what is opened on its loop later.
        per_loop = self._http.get(loop, {})
        opened = list(per_loop.values())
        per_loop.clear()
        for http in opened:
            closer = getattr(http, "aclose", None)
            if closer is not None:
                await closer()
        self.hook.modelplug_close(client=self)

    def close(self) -> None:
        """Close every thread's private loop and the HTTP clients plugins opened on it,
        and the background loop; then what plugins hold open for this client outside a
        loop (:func:`~modelplug.contract.hookspecs.modelplug_close`). A loop another thread is
        running a call on right now is closed by that thread when its call ends."""
        with self._thread_loops_lock:
            owned = list(self._thread_loops)
            self._thread_loops.clear()
        for own in owned:
            own.release()
        if self._background is not None:
            bg_loop, thread = self._background
            asyncio.run_coroutine_threadsafe(self.aclose(), bg_loop).result(timeout=10)
            bg_loop.call_soon_threadsafe(bg_loop.stop)
            thread.join(timeout=10)
            if not thread.is_alive():
                bg_loop.close()
            self._background = None
        self.hook.modelplug_close(client=self)

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


def _checked_spec(spec: str) -> str:
    """A spec without surrounding white space; one with white space inside, or nothing
    left, is refused rather than resolved to a model named " "."""
    if not isinstance(spec, str):
        raise TypeError(
            f"the model must be a spec (provider/model, an alias or a role) or a Route "
            f"from Client.resolve(), not {type(spec).__name__}"
        )
    stripped = spec.strip()
    if not stripped or any(c.isspace() for c in stripped):
        from modelplug.host.known_providers import example_spec

        raise ConfigError(
            f"the model spec {spec!r} is empty or holds white space; write provider/model, "
            f"e.g. {example_spec('anthropic')}"
        )
    return stripped


def _placed(spec: str) -> str:
    """``spec``, or ``provider/spec`` for a bare model id of a known vendor's family
    (:data:`modelplug.host.known_providers.BARE_FAMILIES`)."""
    if "/" in spec:
        return spec
    from modelplug.host.known_providers import vendor_of

    vendor = vendor_of(spec)
    return spec if vendor is None else f"{vendor}/{spec}"


def _window_said(
    override: Any,
    probed: tuple[ModelInfo, float] | None,
    own: ModelInfo,
    plugin: str | None,
    cataloger: str | None,
) -> str | None:
    """Who gave a route's context window, by the layers :meth:`Client._resolve` lays
    over each other: the settings, a probe, the provider plugin, a catalog plugin."""
    if override is not None and override.context_window is not None:
        return "settings"
    if probed is not None and probed[0].context_window is not None:
        return "probe"
    if own.context_window is not None:
        return own.context_window_source or plugin
    return cataloger


def _did_you_mean(word: str, choices: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, or nothing."""
    from difflib import get_close_matches

    close = get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


class _ThreadLoop:
    """One thread's private event loop for the sync API, with the HTTP clients plugins
    opened on it (the same dict :meth:`Client.async_http` fills for that loop).

    Released by :meth:`Client.close`, or when its thread ends (see :class:`_ThreadSlot`),
    or when the Client is collected. So however many threads come and go, what stays
    open is bounded by the threads alive.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, http: dict[str, Any]) -> None:
        self.loop = loop
        self.http = http
        self.lock = threading.RLock()
        # Set by close() while a call runs on the loop: the call's thread releases it
        # when the call ends, and the loop is not reused.
        self.closing = False

    def release(self) -> None:
        """Close the HTTP clients and the loop, or, while a call runs on it, mark it for
        the calling thread to close when that call ends."""
        with self.lock:
            loop = self.loop
            if loop.is_closed():
                return
            if loop.is_running():
                self.closing = True
                return
            _shut_down(loop, self.http)

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # a finalizer must not raise
            pass


class _ThreadSlot:
    """What a Client's thread-local holds for one thread: its _ThreadLoop. Only the
    thread-local refers to it, so CPython drops it when the thread ends, in that thread,
    and ``__del__`` releases the loop there (a traceback that keeps the _ThreadLoop
    alive through a frame does not keep the slot)."""

    def __init__(self, own: _ThreadLoop) -> None:
        self.own = own

    def __del__(self) -> None:
        try:
            self.own.release()
        except Exception:  # a finalizer must not raise
            pass


def _shut_down(loop: asyncio.AbstractEventLoop, http: dict[str, Any]) -> None:
    """Close ``http``'s clients on ``loop`` (which no thread is running), then the loop:
    its selector and wake-up sockets."""
    clients = list(http.values())
    http.clear()
    if sys.is_finalizing():
        # Too late to run anything (imports fail, so would every task); the process is
        # ending and the system closes its sockets. Normally _close_open_clients ran first.
        loop.close()
        return

    async def close_all() -> None:
        for client in clients:
            closer = getattr(client, "aclose", None)
            if closer is not None:
                try:
                    await closer()
                except Exception:  # closing what is left, best effort
                    pass
        # One more turn so transports run their connection_lost and close sockets.
        await asyncio.sleep(0)

    try:
        loop.run_until_complete(close_all())
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()


async def _yield_to_loop() -> None:
    """Suspend once, so the loop can return to the sync consumer."""
    await asyncio.sleep(0)
