"""The plugin host: discovery, toggles, isolation and listing.

Plugins come from four sources: core's built-ins, installed distributions (entry point
group ``modelplug``, entry point name = distribution name), project-local modules
(only in a project the user trusts) and objects passed to ``Client(plugins=[...])``.
A disabled plugin is decided from metadata alone: its module is never imported.
"""

from __future__ import annotations

import importlib
import inspect
import operator
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, cast

import pluggy

from modelplug.contract import hookspecs
from modelplug.contract.errors import ModelplugError, PluginError, PluginLoadError, PluginLockError
from modelplug.contract.settings import PluginToggles, Settings, normalize_plugin_name, warn
from modelplug.host.plugin_lock import ACCEPT, LockGuard, lock_setting

if TYPE_CHECKING:
    from modelplug.contract.context import CallContext
    from modelplug.contract.hook_types import HookRelay

__all__ = ["PluginHost", "PluginInfo", "find_policies"]


Source = Literal["builtin", "entry point", "local", "explicit"]
BUILTIN_MODULES = ("config", "echo", "classify", "repetition")
# Hooks whose implementation must answer None for routes it does not serve: an
# ``async def`` always returns a coroutine, so it would claim every route.
NOT_ASYNC_DEF = (
    "modelplug_stream",
    "modelplug_probe",
    "modelplug_embed",
    "modelplug_transcribe",
    "modelplug_list_models",
    "modelplug_count_tokens",
)
# What a plugin object sets to say it is a policy of some kind (``fallback``,
# ``limits``), so policies of one kind can find each other (find_policies).
POLICY_ATTRIBUTE = "modelplug_policy"
# What a plugin sets to name the settings tables it reads beyond the one of its own name
# (modelplug-router's ``[groups]``), so the client does not warn about them.
SECTIONS_ATTRIBUTE = "modelplug_sections"


@dataclass
class PluginInfo:
    """One row of ``modelplug plugins``."""

    name: str
    version: str | None
    source: Source
    enabled: bool
    reason: str
    hooks: list[str] = field(default_factory=list)
    error: str | None = None
    module: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "source": self.source,
            "hooks": self.hooks,
            "enabled": self.enabled,
            "reason": self.reason,
            "error": self.error,
            "module": self.module,
        }


class PluginHost:
    """A pluggy PluginManager with modelplug's discovery and toggle rules.

    :param settings: merged settings; their ``[plugins]`` tables are the toggles.
    :param explicit: plugin objects (modules, instances) registered no matter the toggles.
    :param enable: names that form the explicit allow-list (None: no allow-list).
    :param disable: names disabled explicitly (the last word).
    :param entry_points: False skips installed plugins (the test kit's isolation).
    :param strict: make a plugin that fails to load fatal (default: MODELPLUG_STRICT_PLUGINS).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        explicit: Sequence[object] = (),
        enable: Iterable[str] | None = None,
        disable: Iterable[str] = (),
        entry_points: bool = True,
        strict: bool | None = None,
    ) -> None:
        self.settings = settings
        self.pm = pluggy.PluginManager("modelplug")
        self.pm.add_hookspecs(hookspecs)
        self.infos: list[PluginInfo] = []
        # What policies ask on every call, kept until a plugin is added or removed: the
        # policies of a kind, and the hook callers that skip some plugins.
        self._kinds: dict[str, tuple[object, ...]] = {}
        self._subsets: dict[tuple[str, tuple[int, ...]], tuple[Any, tuple[object, ...]]] = {}
        self.strict = (
            strict if strict is not None else settings.getenv("MODELPLUG_STRICT_PLUGINS") == "1"
        )
        objects = list(explicit)
        self._toggles = settings.toggle_layers()
        explicit_toggles = PluginToggles(
            enable=list(enable) if enable is not None else None, disable=list(disable)
        )
        if enable is not None or explicit_toggles.disable:
            self._toggles.append(("explicit argument", explicit_toggles))
        self._register_builtins()
        if entry_points:
            self._register_entry_points()
        self._register_local()
        for obj in objects:
            self.add(obj)
        if entry_points:
            self.warn_unknown_toggles()

    @property
    def hook(self) -> HookRelay:
        """The hooks, typed as pluggy calls them (see :mod:`modelplug.contract.hook_types`)."""
        return cast("HookRelay", self.pm.hook)

    def declared_sections(self) -> set[str]:
        """The settings sections the registered plugins read beyond the one named for
        them: a plugin (its module or object) lists them in a ``modelplug_sections``
        tuple (modelplug-deadline's ``("deadlines",)``), so core does not warn about
        them."""
        sections: set[str] = set()
        for plugin in self.pm.get_plugins():
            named = getattr(plugin, SECTIONS_ATTRIBUTE, ())
            if isinstance(named, tuple | list | frozenset | set):
                sections.update(s for s in named if isinstance(s, str))
        return sections

    # -- toggles ---------------------------------------------------------------------

    def decide(self, name: str, source: Source) -> tuple[bool, str]:
        """Whether a plugin is enabled, and which setting decided it.

        Core's built-ins are never cut by an allow-list, nor are a project's own local
        plugins (listing one in ``local = [...]`` is the project asking for it); a
        ``disable`` list still switches either off.
        """
        short = normalize_plugin_name(name)
        enabled, reason = True, "enabled by default"
        for where, toggles in self._toggles:
            allow = toggles.enable
            if allow is not None and source not in ("builtin", "local"):
                setting = _setting(where, "enable")
                if short in {normalize_plugin_name(n) for n in allow}:
                    enabled, reason = True, f"in the enable list {setting}"
                else:
                    enabled, reason = False, f"not in the enable list {setting}"
            if short in {normalize_plugin_name(n) for n in toggles.disable}:
                enabled, reason = False, f"disabled by {_setting(where, 'disable')}"
        return enabled, reason

    def warn_unknown_toggles(self) -> None:
        """A name in an enable or disable list that is no plugin here is a typo until
        proven otherwise: say so, naming the plugins there are."""
        known = {normalize_plugin_name(i.name) for i in self.infos}
        listing = ", ".join(sorted(i.name for i in self.infos if i.source != "builtin"))
        for where, toggles in self._toggles:
            for kind, names in (("enable", toggles.enable or []), ("disable", toggles.disable)):
                for unknown in [n for n in names if normalize_plugin_name(n) not in known]:
                    warn(
                        f"{_setting(where, kind)} names {unknown!r}, which is not an "
                        f"installed plugin (installed: {listing or 'none'})",
                        stacklevel=5,
                    )

    # -- registration ------------------------------------------------------------------

    def _register_builtins(self) -> None:
        from importlib.metadata import version as dist_version

        try:
            core_version: str | None = dist_version("modelplug")
        except metadata.PackageNotFoundError:
            core_version = None
        for short in BUILTIN_MODULES:
            enabled, reason = self.decide(short, "builtin")
            info = PluginInfo(short, core_version, "builtin", enabled, reason)
            info.module = f"modelplug.builtin.{short}"
            if enabled:
                module = importlib.import_module(info.module)
                self._register(module, short, info)
            self.infos.append(info)

    def _register_entry_points(self) -> None:
        entry_points = _entry_points()
        setting = lock_setting(self.settings)
        guard = LockGuard(setting, self.settings.data_dir()) if setting else None
        refusals: dict[str, str] = {}
        to_load = []
        for ep in entry_points:
            dist = getattr(ep, "dist", None)
            version = getattr(dist, "version", None) if dist is not None else None
            enabled, reason = self.decide(ep.name, "entry point")
            info = PluginInfo(ep.name, version, "entry point", enabled, reason, module=ep.value)
            self.infos.append(info)
            problem = guard.check(ep) if guard is not None and enabled else None
            if problem is not None:
                info.enabled, info.reason = False, "kept out by the plugin lock"
                info.error = refusals[dist.name if dist is not None else ep.name] = problem
            elif enabled:
                to_load.append((ep, info))
        if guard is not None:
            self._refuse(guard, refusals, [ep.name for ep in entry_points])
        for ep, info in to_load:
            try:
                plugin = ep.load()
            except Exception as exc:
                self._failed(info, exc)
                continue
            self._register(plugin, ep.name, info)

    def _refuse(self, guard: LockGuard, refusals: dict[str, str], installed: list[str]) -> None:
        """Say which plugins the lock kept out: one warning each, or in strict mode one
        PluginLockError naming every distribution, before any plugin was imported."""
        for name in guard.removed(installed):
            refusals[name] = f"{name} is in the plugin lock {guard.setting.path} but not installed"
        guard.cache.save()
        if refusals and guard.setting.strict:
            raise PluginLockError(
                f"refusing to start: {'; '.join(refusals.values())}. Run `modelplug plugins "
                'lock` to accept the plugins as installed ([plugins] lock_mode = "strict")',
                sorted(refusals),
            )
        for name, problem in refusals.items():
            kept_out = "" if problem.endswith("not installed") else f"skipped the plugin {name}: "
            warn(f"{kept_out}{problem}; {ACCEPT}", stacklevel=5)

    def _register_local(self) -> None:
        modules = self.settings.local_plugins
        if not modules:
            return
        project = self.settings.project_dir
        trusted = self.settings.is_trusted(project)
        for dotted in modules:
            enabled, reason = self.decide(dotted, "local")
            info = PluginInfo(dotted, None, "local", enabled, reason, module=dotted)
            self.infos.append(info)
            if not enabled:
                continue
            if not trusted:
                info.enabled = False
                info.reason = f"project {project} is not trusted"
                warn(
                    f"skipped the project-local plugin {dotted!r}: the project {project} is "
                    f"not trusted. Run `modelplug trust {project}` to load its plugins.",
                    stacklevel=4,
                )
                continue
            try:
                module = _import_from(dotted, project)
            except Exception as exc:
                self._failed(info, exc)
                continue
            self._register(module, dotted, info)

    def add(self, plugin: object, name: str | None = None) -> PluginInfo:
        """Register a plugin object given in code (``Client(plugins=[obj])``)."""
        label = name or getattr(plugin, "name", None) or getattr(plugin, "__name__", None)
        label = label if isinstance(label, str) else type(plugin).__name__
        version = getattr(plugin, "__version__", None)
        info = PluginInfo(label, version, "explicit", True, "passed to Client(plugins=...)")
        info.module = getattr(plugin, "__name__", type(plugin).__module__)
        self.infos.append(info)
        self._register(plugin, label, info)
        return info

    def remove(self, plugin: object) -> None:
        """Unregister a plugin object."""
        name = self.pm.get_name(plugin)
        self.pm.unregister(plugin)
        self._forget_plugins()
        self.infos = [i for i in self.infos if i.name != name]

    def _forget_plugins(self) -> None:
        """The registered plugins changed: what was kept of them is stale."""
        self._kinds.clear()
        self._subsets.clear()

    def _register(self, plugin: object, name: str, info: PluginInfo) -> None:
        self._forget_plugins()
        if self.pm.has_plugin(name):
            name = f"{name}#{id(plugin):x}"
        try:
            self.pm.register(plugin, name=name)
        except Exception as exc:
            self._failed(info, exc)
            return
        callers = self.pm.get_hookcallers(plugin) or []
        unknown = [c.name for c in callers if not c.has_spec()]
        if unknown:
            self.pm.unregister(plugin)
            self._failed(
                info,
                PluginLoadError(
                    f"implements unknown hooks {', '.join(unknown)}; known hooks: "
                    f"{', '.join(sorted(n for n in dir(hookspecs) if n.startswith('modelplug_')))}"
                ),
            )
            return
        wrong = _async_defs(self.pm, plugin)
        if wrong:
            self.pm.unregister(plugin)
            self._failed(
                info,
                PluginLoadError(
                    f"{', '.join(wrong)} is an async def, so it would claim every route; "
                    "make it a plain def that returns None for routes it does not serve "
                    "and otherwise an async iterator (for modelplug_probe, "
                    "modelplug_embed, modelplug_transcribe, modelplug_list_models and "
                    "modelplug_count_tokens: an "
                    "awaitable), "
                    "e.g. return an async generator made by another function"
                ),
            )
            return
        info.hooks = sorted(c.name for c in callers)

    def _failed(self, info: PluginInfo, exc: BaseException) -> None:
        info.enabled = False
        info.error = f"{type(exc).__name__}: {exc}"
        info.reason = "failed to load"
        message = f"skipped the plugin {info.name!r}: {info.error}"
        if self.strict:
            raise PluginLoadError(message + " (MODELPLUG_STRICT_PLUGINS=1)") from exc
        warn(message + " (set MODELPLUG_STRICT_PLUGINS=1 to make this fatal)", stacklevel=4)

    # -- queries -----------------------------------------------------------------------

    def hook_excluding(self, hook_name: str, plugins: Sequence[object]) -> Any:
        """A caller for one hook that skips ``plugins`` (pluggy's subset_hook_caller),
        made once for those plugins while the registered plugins stay the same (a
        policy that re-opens a stream asks for the same one on every call)."""
        key = (hook_name, tuple(map(id, plugins)))
        kept = self._subsets.get(key)
        # The plugins are kept beside their caller: an id is only theirs while they live.
        if kept is not None and all(map(operator.is_, kept[1], plugins)):
            return kept[0]
        caller = self.pm.subset_hook_caller(hook_name, remove_plugins=list(plugins))
        self._subsets[key] = (caller, tuple(plugins))
        return caller

    def listing(self) -> list[PluginInfo]:
        return list(self.infos)

    def plugins_of_kind(self, kind: str) -> list[object]:
        """Registered plugin objects whose ``modelplug_policy`` attribute is ``kind``
        (found once per kind while the registered plugins stay the same: a policy asks
        this on every call)."""
        found = self._kinds.get(kind)
        if found is None:
            found = self._kinds[kind] = tuple(self._plugins_of_kind(kind))
        return list(found)

    def _plugins_of_kind(self, kind: str) -> list[object]:
        # A module's attribute is read from its dict: a missing one would cost an
        # AttributeError (about 1 us) per plugin module.
        return [
            p
            for p in self.pm.get_plugins()
            if (
                p.__dict__.get(POLICY_ATTRIBUTE)
                if type(p) is ModuleType
                else getattr(p, POLICY_ATTRIBUTE, None)
            )
            == kind
        ]

    def call_first(self, hook_name: str, kwargs: Mapping[str, Any]) -> tuple[Any, str | None]:
        """Call a ``firstresult`` hook the way pluggy would, and say which plugin
        answered. An implementation that raises anything but a ModelplugError (its own
        deliberate word, such as a ConfigError) is reported as a PluginError naming the
        plugin: a bug there must not pass for a failure of the model or the provider."""
        caller = getattr(self.pm.hook, hook_name)
        if any(i.hookwrapper or i.wrapper for i in caller.get_hookimpls()):
            return caller(**kwargs), None
        for result, plugin in self._answers(hook_name, kwargs):
            if result is not None:
                return result, plugin
        return None, None

    def call_each(self, hook_name: str, kwargs: Mapping[str, Any]) -> list[tuple[Any, str]]:
        """Call every implementation of a hook, with the plugin that gave each answer."""
        return [(r, p) for r, p in self._answers(hook_name, kwargs) if r is not None]

    def _answers(self, hook_name: str, kwargs: Mapping[str, Any]) -> Iterator[tuple[Any, str]]:
        """Each implementation's answer, in pluggy's order (last registered first),
        with the failure of one reported as that plugin's PluginError."""
        for impl in reversed(getattr(self.pm.hook, hook_name).get_hookimpls()):
            try:
                result = impl.function(*[kwargs[a] for a in impl.argnames])
            except ModelplugError:
                raise
            except Exception as exc:
                failure = _plugin_error(impl.plugin_name, hook_name, exc)
            else:
                yield result, impl.plugin_name
                continue
            # Raised outside the except block: it must not chain the raw exception.
            raise failure


def find_policies(client: CallContext, kind: str) -> list[object]:
    """The policies of ``kind`` registered on ``client``, in registration order.

    A policy plugin says what it is with a ``modelplug_policy = "<kind>"`` attribute
    on its module or object. The fallback policy uses this to step aside when a program
    registered its own FallbackPolicy, and to skip every policy of its kind when it
    re-opens a stream.
    """
    return client.policies(kind)


def _async_defs(pm: pluggy.PluginManager, plugin: object) -> list[str]:
    wrong = []
    for name in NOT_ASYNC_DEF:
        caller = getattr(pm.hook, name, None)
        if caller is None:
            continue
        for impl in caller.get_hookimpls():
            if impl.plugin is plugin and (
                inspect.iscoroutinefunction(impl.function)
                or inspect.isasyncgenfunction(impl.function)
            ):
                wrong.append(name)
    return wrong


def _setting(where: str, kind: str) -> str:
    """The setting a toggle came from, as a user would look for it."""
    if where == "environment":
        return "MODELPLUG_PLUGINS" if kind == "enable" else "MODELPLUG_DISABLE"
    if where == "explicit argument":
        return f"Client({kind}=...)"
    return f"[plugins] {kind} of the {where}"


def _entry_points() -> list[metadata.EntryPoint]:
    seen: set[str] = set()
    out = []
    for ep in metadata.entry_points(group="modelplug"):
        if ep.name in seen:
            continue
        seen.add(ep.name)
        out.append(ep)
    return sorted(out, key=lambda e: e.name)


def _import_from(dotted: str, project: Any) -> ModuleType:
    root = os.fspath(project) if project is not None else None
    if root and root not in sys.path:
        sys.path.insert(0, root)
        try:
            return importlib.import_module(dotted)
        finally:
            if root in sys.path:
                sys.path.remove(root)
    return importlib.import_module(dotted)


def _plugin_error(plugin: str, hook: str, error: Exception) -> PluginError:
    """The PluginError for ``error``, whose ``__cause__`` is ``error`` as a redacted
    stand-in (see :func:`modelplug.contract.secrets.clean_exception`): a plugin's bug may hold
    a key in its message or its attributes."""
    from modelplug.contract.secrets import clean_exception

    failure = PluginError(plugin, hook, error)
    failure.__cause__ = error
    failure.__suppress_context__ = True
    clean_exception(failure)
    return failure
