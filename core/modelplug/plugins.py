"""The plugin host: discovery, toggles, isolation and listing.

Plugins come from four sources: core's built-ins, installed distributions (entry point
group ``modelplug``, entry point name = distribution name), project-local modules
(only in a project the user trusts) and objects passed to ``Client(plugins=[...])``.
A disabled plugin is decided from metadata alone: its module is never imported.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from types import ModuleType
from typing import Any, Literal

import pluggy

from . import hookspecs
from .errors import PluginLoadError
from .settings import ModelplugWarning, PluginToggles, Settings, normalize_plugin_name

__all__ = ["PluginHost", "PluginInfo", "hookimpl"]

hookimpl = pluggy.HookimplMarker("modelplug")

Source = Literal["builtin", "entry point", "local", "explicit"]
BUILTIN_MODULES = ("config", "echo", "classify")


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
    :param explicit: plugin objects (modules, instances) registered no matter the toggles,
        and names (strings) that form the explicit allow-list.
    :param disable: names disabled explicitly (the last word).
    :param entry_points: False skips installed plugins (the test kit's isolation).
    :param strict: make a plugin that fails to load fatal (default: MODELPLUG_STRICT_PLUGINS).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        explicit: Sequence[object | str] = (),
        disable: Iterable[str] = (),
        entry_points: bool = True,
        strict: bool | None = None,
    ) -> None:
        self.settings = settings
        self.pm = pluggy.PluginManager("modelplug")
        self.pm.add_hookspecs(hookspecs)
        self.infos: list[PluginInfo] = []
        self.strict = (
            strict if strict is not None else settings.getenv("MODELPLUG_STRICT_PLUGINS") == "1"
        )
        names = [p for p in explicit if isinstance(p, str)]
        objects = [p for p in explicit if not isinstance(p, str)]
        self._toggles = settings.toggle_layers()
        explicit_toggles = PluginToggles(
            enable=list(names) if names else None, disable=list(disable)
        )
        if names or explicit_toggles.disable:
            self._toggles.append(("explicit argument", explicit_toggles))
        self._register_builtins()
        if entry_points:
            self._register_entry_points()
        self._register_local()
        for obj in objects:
            self.add(obj)

    @property
    def hook(self) -> Any:
        return self.pm.hook

    # -- toggles ---------------------------------------------------------------------

    def decide(self, name: str, source: Source) -> tuple[bool, str]:
        """Whether a plugin is enabled, and which setting decided it."""
        short = normalize_plugin_name(name)
        enabled, reason = True, "enabled by default"
        for where, toggles in self._toggles:
            allow = toggles.enable
            if allow is not None and source != "builtin":
                if short in {normalize_plugin_name(n) for n in allow}:
                    enabled, reason = True, f"in the enable list of the {where}"
                else:
                    enabled, reason = False, f"not in the enable list of the {where}"
            if short in {normalize_plugin_name(n) for n in toggles.disable}:
                enabled, reason = False, f"disabled by the {where}"
        return enabled, reason

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
        for ep in _entry_points():
            dist = getattr(ep, "dist", None)
            version = getattr(dist, "version", None) if dist is not None else None
            enabled, reason = self.decide(ep.name, "entry point")
            info = PluginInfo(ep.name, version, "entry point", enabled, reason, module=ep.value)
            self.infos.append(info)
            if not enabled:
                continue
            try:
                plugin = ep.load()
            except Exception as exc:
                self._failed(info, exc)
                continue
            self._register(plugin, ep.name, info)

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
                warnings.warn(
                    f"skipped the project-local plugin {dotted!r}: the project {project} is "
                    f"not trusted. Run `modelplug trust {project}` to load its plugins.",
                    ModelplugWarning,
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
        self.infos = [i for i in self.infos if i.name != name]

    def _register(self, plugin: object, name: str, info: PluginInfo) -> None:
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
        info.hooks = sorted(c.name for c in callers)

    def _failed(self, info: PluginInfo, exc: BaseException) -> None:
        info.enabled = False
        info.error = f"{type(exc).__name__}: {exc}"
        info.reason = "failed to load"
        message = f"skipped the plugin {info.name!r}: {info.error}"
        if self.strict:
            raise PluginLoadError(message + " (MODELPLUG_STRICT_PLUGINS=1)") from exc
        warnings.warn(
            message + " (set MODELPLUG_STRICT_PLUGINS=1 to make this fatal)",
            ModelplugWarning,
            stacklevel=4,
        )

    # -- queries -----------------------------------------------------------------------

    def hook_excluding(self, hook_name: str, plugins: Sequence[object]) -> Any:
        """A caller for one hook that skips ``plugins`` (pluggy's subset_hook_caller)."""
        return self.pm.subset_hook_caller(hook_name, remove_plugins=list(plugins))

    def listing(self) -> list[PluginInfo]:
        return list(self.infos)


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
