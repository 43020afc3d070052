"""Configuration: the user file, the project file, the environment and explicit arguments.

Later wins: user, project, environment, explicit. Only the user's own file may define
providers, base URLs, headers and key variables; a project file that tries is warned
about by key and ignored there, so a cloned repository can never redirect a key to its
own server. Keys come from environment variables, or from a user-only credentials file.
"""

from __future__ import annotations

import ipaddress
import os
import re
import stat
import tomllib
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from modelplug.contract.errors import ConfigError, MissingKeyError
from modelplug.contract.records import TableError, field_names, from_table
from modelplug.contract.routes import Price, StructuredMode, TextCallMode
from modelplug.contract.secrets import redact, register_secret

__all__ = [
    "CORE_KEYS",
    "PROJECT_MODEL_KEYS",
    "REDIRECT_KEYS",
    "TOGGLE_KEYS",
    "Layer",
    "ModelSettings",
    "ModelplugWarning",
    "PluginToggles",
    "ProviderSettings",
    "Settings",
    "check_base_url",
    "check_key_variable",
    "is_loopback_url",
    "looks_like_variable_name",
    "normalize_plugin_name",
    "warn",
    "warn_settings",
]

CORE_KEYS = frozenset(
    {
        "model",
        "providers",
        "models",
        "aliases",
        "roles",
        "fallbacks",
        "plugins",
        "trusted_projects",
        "reasoning_budget",
        "reasoning_reserve",
    }
)
# Keys that could send traffic or a key somewhere else; never taken from a project file.
REDIRECT_KEYS = frozenset(
    {"base_url", "url", "endpoint", "headers", "api_key", "api_key_env", "allow_insecure_http"}
)
PROJECT_MODEL_KEYS = frozenset({"context_window", "max_output_tokens", "price"})
BUILTIN_ROLES = ("smart", "worker", "explore", "compact")


class ModelplugWarning(UserWarning):
    """A setting was ignored or a plugin was skipped; the message says which and why."""


# The settings sections are plain dataclasses checked by modelplug.contract.records: reading
# settings happens on every start and must not import pydantic.


@dataclass(kw_only=True)
class ProviderSettings:
    """A provider defined in the user's own settings file."""

    type: str
    base_url: str | None = None
    # The name of the key's environment variable; "" means "no key" (a server that
    # wants none), where leaving it out lets the type's default variable apply.
    api_key_env: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    allow_insecure_http: bool = False
    # The server software behind a generic type (``llamacpp``, ``vllm``, ``ollama``,
    # ``lmstudio``, ``litellm``, ``openrouter``): its probes and quirks then apply.
    server: str | None = None
    # Whether the server runs on this machine, free and keyless (None: a loopback
    # base_url says so). ``true`` for one elsewhere on your network, ``false`` for a
    # loopback proxy to a paid API (the type's default key variable applies again).
    local: bool | None = None
    # The keys the table gave: ``api_key_env`` given as None (from code; TOML has no
    # null) means "no key", where leaving it out lets a preset's variable apply.
    given: frozenset[str] = field(default=frozenset(), init=False, compare=False)
    # Keys beyond these that the provider's type takes (``region`` for Bedrock), as the
    # table gave them: the serving plugin declares and types them (``Provider.options``,
    # read with ``modelplug.plugin.provider_options``); core checks them at resolve.
    extra: dict[str, Any] = field(default_factory=dict, init=False, compare=False)

    def __repr__(self) -> str:
        return (
            f"ProviderSettings(type={self.type!r}, base_url={self.base_url!r}, "
            f"api_key_env={self.api_key_env!r}, headers={dict.fromkeys(self.headers, '***')}, "
            f"allow_insecure_http={self.allow_insecure_http!r}, server={self.server!r}, "
            f"local={self.local!r})"
        )


PROVIDER_KEYS = frozenset(field_names(ProviderSettings))


@dataclass(kw_only=True)
class ModelSettings:
    """What the user (or, for the harmless fields, a project) says about one model."""

    context_window: int | None = field(default=None, metadata={"gt": 0})
    max_output_tokens: int | None = field(default=None, metadata={"gt": 0})
    price: Price | None = None
    text_tool_calls: TextCallMode | None = None
    reasoning_dialect: str | None = None
    supports_tools: bool | None = None
    structured_output: StructuredMode | None = None


@dataclass(kw_only=True)
class PluginToggles:
    """``enable`` is an allow-list (None: every plugin; []: none); ``disable`` blocks.
    ``lock`` names the plugin lock file (relative to the settings file that names it) and
    ``lock_mode`` says what a plugin that differs from it does: ``"warn"`` (skipped, with
    a warning) or ``"strict"`` (the program refuses to start)."""

    enable: list[str] | None = None
    disable: list[str] = field(default_factory=list)
    local: list[str] = field(default_factory=list)
    lock: str | None = None
    lock_mode: Literal["warn", "strict"] | None = None


TOGGLE_KEYS = frozenset(field_names(PluginToggles))
LayerName = Literal["user file", "project file", "environment", "explicit"]


@dataclass
class Layer:
    """One source of settings, as read, after the security rules were applied."""

    name: LayerName
    path: Path | None
    data: dict[str, Any]


def normalize_plugin_name(name: str) -> str:
    """``modelplug-anthropic``, ``modelplug_anthropic`` and ``anthropic`` -> ``anthropic``."""
    short = name.strip().lower().replace("_", "-")
    return short.removeprefix("modelplug-")


# A route is resolved on every call and its base URL checked with it, the same few URLs
# each time: a valid one is remembered (a bad one raises, and lru_cache keeps no error).
@lru_cache(maxsize=256)
def check_base_url(url: str, *, allow_insecure_http: bool = False, provider: str = "") -> str:
    """Validate a base URL: http(s), no user or password, plain http only to loopback
    unless the provider sets allow_insecure_http. Returns the URL without a trailing /."""
    return _check_base_url(url, allow_insecure_http, provider)


def _check_base_url(url: str, allow_insecure_http: bool, provider: str) -> str:
    who = f" of provider {provider!r}" if provider else ""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ConfigError(f"base_url{who} is not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise ConfigError(f"base_url{who} must start with http:// or https://")
    if parts.username is not None or parts.password is not None:
        raise ConfigError(
            f"base_url{who} must not hold a user name or password; put the key in an "
            "environment variable named by api_key_env"
        )
    if not parts.hostname:
        raise ConfigError(f"base_url{who} has no host")
    secret_names = [name for name in _query_names(parts.query) if _is_secret_name(name)]
    if secret_names:
        raise ConfigError(
            f"base_url{who} must not carry a key in its query ({', '.join(secret_names)}=...); "
            "put the key in an environment variable named by api_key_env, or in headers "
            "in your user settings file"
        )
    if parts.scheme == "http" and not allow_insecure_http and not _is_loopback(parts.hostname):
        raise ConfigError(
            f"base_url{who} uses plain http to {parts.hostname}; use https, or set "
            "allow_insecure_http = true for this provider in your user settings file if "
            "the network is trusted"
        )
    return url.rstrip("/")


# RFC 9110's token: what a header name may be made of.
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def check_headers(headers: dict[str, str], *, provider: str = "") -> None:
    """Refuse a header an HTTP request cannot carry, naming it (never its value, which
    is often a key): a name that is not an HTTP token, a value with a line break or a
    control character (it would end the header early: request splitting), or a value
    outside ASCII."""
    who = f" of provider {provider!r}" if provider else ""
    for name, value in headers.items():
        if not name or not _TOKEN.issuperset(name):
            raise ConfigError(
                f"header name {name[:60]!r}{who} is not a valid HTTP header name: use "
                "letters, digits and - only (e.g. x-team)"
            )
        if not value.isascii() or any((c < " " and c != "\t") or c == "\x7f" for c in value):
            raise ConfigError(
                f"the value of header {name!r}{who} has a line break, a control character "
                "or a character outside ASCII, which an HTTP header cannot carry; write it "
                "on one line in ASCII (percent-encode or base64 anything else)"
            )


# Query parameters that carry a credential: these names, and any name ending in one of
# the suffixes (``googleApiKey``, ``x-access-token``), compared without case, - or _.
_SECRET_QUERY_NAMES = frozenset(
    {
        "key",
        "apikey",
        "auth",
        "authorization",
        "code",
        "credential",
        "credentials",
        "jwt",
        "pass",
        "passwd",
        "password",
        "pwd",
        "secret",
        "session",
        "sig",
        "signature",
        "token",
    }
)
_SECRET_QUERY_SUFFIXES = ("key", "token", "secret", "password", "signature", "credential")


def _query_names(query: str) -> list[str]:
    return [part.partition("=")[0] for part in query.split("&") if part]


def _is_secret_name(name: str) -> bool:
    from urllib.parse import unquote_plus

    plain = unquote_plus(name).lower().replace("-", "").replace("_", "")
    return plain in _SECRET_QUERY_NAMES or plain.endswith(_SECRET_QUERY_SUFFIXES)


# What an environment variable's name looks like (POSIX: letters, digits, _).
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
# Prefixes of vendors' keys, so a key that happens to be made of name characters is
# still recognised as one.
_KEY_PREFIXES = (
    "sk_",
    "sk-",
    "pk_",
    "rk_",
    "ghp_",
    "gho_",
    "github_pat_",
    "glpat",
    "xox",
    "AIza",
    "gsk_",
    "hf_",
    "ya29",
    "AKIA",
)


def looks_like_variable_name(value: str) -> bool:
    """Whether ``value`` can be an environment variable's name and does not look like a
    key (a vendor's key prefix, or 24+ characters mixing lower case, upper case and
    digits), as a key pasted into ``api_key_env`` by mistake would."""
    if not _VARIABLE_NAME.fullmatch(value) or value.startswith(_KEY_PREFIXES):
        return False
    mixed = (
        any(c.islower() for c in value)
        and any(c.isupper() for c in value)
        and any(c.isdigit() for c in value)
    )
    return not (mixed and len(value) >= 24)


def check_key_variable(value: str, *, provider: str = "") -> str:
    """``value`` when it can name an environment variable; otherwise a ConfigError that
    says so without quoting it (it is likely a key pasted in by mistake, and is
    registered as a secret so it is masked wherever else it appears)."""
    if looks_like_variable_name(value):
        return value
    register_secret(value)
    who = f" of provider {provider!r}" if provider else ""
    raise ConfigError(
        f"api_key_env{who} must be the NAME of an environment variable (letters, digits "
        "and _, such as LAB_API_KEY), but its value does not look like one: if you pasted "
        "the key itself, remove it from the settings file, put it in an environment "
        "variable (or credentials.toml) and name that variable here"
    )


@lru_cache(maxsize=256)  # asked for the same few URLs on every call
def is_loopback_url(url: str) -> bool:
    """Whether ``url`` points at this machine (localhost, 127.0.0.0/8, ::1)."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    return bool(host) and _is_loopback(host or "")


def warn(message: str, *, where: str | None = None, stacklevel: int = 2) -> None:
    """Warn in modelplug's one style: ``modelplug: warning: <where>: <message>``.

    :param where: the file and key the warning comes from, when it comes from a file.
    """
    text = f"{where}: {message}" if where else message
    if not text.startswith("modelplug: warning: "):
        text = f"modelplug: warning: {text}"
    warnings.warn(redact(text), ModelplugWarning, stacklevel=stacklevel + 1)


@lru_cache(maxsize=256)
def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


_credentials_cache: dict[Path, dict[str, str]] = {}


class Settings:
    """The merged settings. Build with :func:`load_settings`.

    Attributes hold the merged view; ``layers`` keeps each source as read, so the plugin
    listing can say which setting decided a toggle.
    """

    def __init__(
        self,
        layers: list[Layer],
        *,
        user_path: Path | None = None,
        project_dir: Path | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.layers = layers
        self.user_path = user_path
        self.project_dir = project_dir
        self._environ = environ if environ is not None else os.environ
        merged: dict[str, Any] = {}
        for layer in layers:
            _deep_merge(merged, {k: v for k, v in layer.data.items() if k != "plugins"})
        self._raw = merged
        self.model: str | None = _expect(merged, "model", str, self._source("model"))
        # Every call's thinking budget sized from the window (modelplug.client.auto_budget).
        self.reasoning_budget: str | None = _one_of(merged, "reasoning_budget", ("auto",))
        self.reasoning_reserve: int | None = _tokens(merged, "reasoning_reserve")
        self.providers = self._parse_providers()
        self.models = self._parse_models()
        self.aliases: dict[str, str] = self._string_map("aliases")
        self.roles: dict[str, str] = self._string_map("roles")
        self.fallbacks: dict[str, list[str]] = self._fallbacks()
        self.trusted_projects: list[Path] = [
            Path(p).expanduser().resolve()
            for p in self._user_data().get("trusted_projects", [])
            if isinstance(p, str)
        ]
        self.local_plugins: list[str] = []
        for layer in layers:
            plugins = layer.data.get("plugins")
            if isinstance(plugins, dict) and isinstance(plugins.get("local"), list):
                self.local_plugins = list(plugins["local"])
        self.options: dict[str, dict[str, Any]] = {
            normalize_plugin_name(k): v
            for k, v in merged.items()
            if k not in CORE_KEYS and isinstance(v, dict)
        }

    # -- construction helpers --------------------------------------------------------

    def source_of(self, section: str) -> str:
        """Which file (or layer) the last word on a top-level table or key came from,
        for messages: ``user file /home/me/.config/modelplug/config.toml``."""
        short = normalize_plugin_name(section)
        for layer in reversed(self.layers):
            if any(normalize_plugin_name(k) == short for k in layer.data):
                return f"{layer.name} {layer.path}" if layer.path else layer.name
        return "settings"

    def _source(self, key: str) -> str:
        for layer in reversed(self.layers):
            if key in layer.data:
                return f"{layer.name} {layer.path}" if layer.path else layer.name
        return "settings"

    def _user_data(self) -> dict[str, Any]:
        for layer in self.layers:
            if layer.name == "user file":
                return layer.data
        return {}

    def _parse_providers(self) -> dict[str, ProviderSettings]:
        providers: dict[str, ProviderSettings] = {}
        raw = self._raw.get("providers", {})
        if not isinstance(raw, dict):
            raise ConfigError(f"{self._source('providers')}: 'providers' must be a table")
        for name, entry in raw.items():
            if not isinstance(entry, dict):
                raise ConfigError(
                    f"{self._source('providers')}: 'providers.{name}' must be a table"
                )
            known = PROVIDER_KEYS.intersection(entry)
            try:
                provider = from_table(
                    ProviderSettings, {k: entry[k] for k in known}, f"providers.{name}"
                )
            except TableError as exc:
                raise ConfigError(f"{self._source('providers')}: {exc}") from None
            provider.given = frozenset(entry)
            provider.extra = {k: v for k, v in entry.items() if k not in known}
            if provider.api_key_env:  # "" is "no key": nothing to check
                try:
                    check_key_variable(provider.api_key_env, provider=name)
                except ConfigError as exc:
                    raise ConfigError(f"{self._source('providers')}: {exc}") from None
            if provider.base_url:
                provider.base_url = check_base_url(
                    provider.base_url,
                    allow_insecure_http=provider.allow_insecure_http,
                    provider=name,
                )
            for value in provider.headers.values():
                register_secret(value)
            try:
                check_headers(provider.headers, provider=name)
            except ConfigError as exc:
                raise ConfigError(f"{self._source('providers')}: {exc}") from None
            providers[name] = provider
        return providers

    def _parse_models(self) -> dict[str, ModelSettings]:
        models: dict[str, ModelSettings] = {}
        raw = self._raw.get("models", {})
        if not isinstance(raw, dict):
            raise ConfigError(f"{self._source('models')}: 'models' must be a table")
        for spec, entry in raw.items():
            entry = self._known_keys(entry, ModelSettings, f"models.{spec}", "models")
            try:
                models[spec] = from_table(ModelSettings, entry, f"models.{spec}")
            except TableError as exc:
                raise ConfigError(f"{self._source('models')}: {exc}") from None
        return models

    def _known_keys(self, entry: Any, record: type, where: str, top: str) -> Any:
        """Drop keys a section does not know, with a warning: a typo must not be silent."""
        if not isinstance(entry, dict):
            return entry
        known = field_names(record)
        unknown = [k for k in entry if k not in known]
        for key in unknown:
            warn_settings(
                f"{self._source(top)}: unknown key '{where}.{key}' (known: {', '.join(known)})"
            )
        return {k: v for k, v in entry.items() if k not in unknown}

    def _string_map(self, key: str) -> dict[str, str]:
        raw = self._raw.get(key, {})
        if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
            raise ConfigError(
                f"{self._source(key)}: '{key}' must be a table of names to model specs"
            )
        return dict(raw)

    def _fallbacks(self) -> dict[str, list[str]]:
        raw = self._raw.get("fallbacks", {})
        ok = isinstance(raw, dict) and all(
            isinstance(v, list) and all(isinstance(s, str) for s in v) for v in raw.values()
        )
        if not ok:
            raise ConfigError(
                f"{self._source('fallbacks')}: 'fallbacks' must map a role or spec to a list "
                'of specs, e.g. worker = ["openrouter/qwen/qwen3-coder", "ollama/qwen3"]'
            )
        return {k: list(v) for k, v in raw.items()}

    # -- queries ----------------------------------------------------------------------

    def toggle_layers(self) -> list[tuple[str, PluginToggles]]:
        """Each layer's plugin toggles, in order (later wins), with its description."""
        out: list[tuple[str, PluginToggles]] = []
        for layer in self.layers:
            plugins = layer.data.get("plugins")
            if plugins is None:
                continue
            where = f"{layer.name} {layer.path}" if layer.path else layer.name
            try:
                out.append((where, from_table(PluginToggles, plugins, "plugins")))
            except TableError as exc:
                raise ConfigError(f"{where}: {exc}") from None
        return out

    def plugin_options(self, name: str, *, project: bool = True) -> dict[str, Any]:
        """The table for one plugin, e.g. ``[fallback]`` -> ``plugin_options("fallback")``.

        :param project: False leaves out what a project file says: for an option that
            must be the user's own choice, such as one that makes the plugin reach the
            network, since a cloned repository's project file is not trusted.
        """
        short = normalize_plugin_name(name)
        if project:
            return dict(self.options.get(short, {}))
        merged: dict[str, Any] = {}
        for layer in self.layers:
            if layer.name == "project file":
                continue
            for key, value in layer.data.items():
                if isinstance(value, dict) and normalize_plugin_name(key) == short:
                    _deep_merge(merged, value)
        return merged

    def model_settings(self, provider: str, model: str) -> ModelSettings | None:
        """The ``[models."provider/model"]`` entry, or the bare model id's entry."""
        return self.models.get(f"{provider}/{model}") or self.models.get(model)

    def is_trusted(self, directory: Path | None) -> bool:
        """Whether the project at ``path`` is in the user's ``trusted_projects``."""
        if directory is None:
            return False
        resolved = directory.resolve()
        return any(resolved == p for p in self.trusted_projects)

    def getenv(self, name: str) -> str | None:
        """An environment variable as these settings see it: the environment given to
        the Client, else the process's."""
        return self._environ.get(name)

    def data_dir(self) -> Path:
        """Where modelplug keeps what outlives one process on this machine (the limits'
        counters, the fallback's cooldowns): MODELPLUG_DATA_DIR, else the platform's
        data directory for modelplug (``~/.local/share/modelplug`` on Linux). Never set
        by a settings file: a cloned project must not choose where your budgets count.
        Not created here; whoever writes in it makes it owner-only (0700)."""
        explicit = self._environ.get("MODELPLUG_DATA_DIR")
        if explicit:
            return Path(explicit).expanduser()
        import platformdirs

        return Path(platformdirs.user_data_dir("modelplug"))

    def provider_headers(self, provider: str) -> dict[str, str]:
        """The header values the user's settings give ``provider`` (``[providers.NAME]
        headers``), to send with a request; empty when it has none. Routes hold only the
        header names (:class:`modelplug.contract.routes.Endpoint`), so a plugin reads the values
        here when it sends, as it reads the key with :meth:`api_key`. The values are
        registered as secrets (masked in every message)."""
        own = self.providers.get(provider)
        if own is None:
            return {}
        for value in own.headers.values():
            register_secret(value)
        return dict(own.headers)

    def api_key(self, variable: str | None, provider: str, *, required: bool = True) -> str | None:
        """The key for a provider: the environment variable, else the user's credentials
        file. Raises MissingKeyError("Set VAR to use the provider NAME.") when required,
        and ConfigError when ``variable`` does not look like a variable's name."""
        if not variable:
            return None
        check_key_variable(variable, provider=provider)
        value = self._environ.get(variable)
        if not value and self.user_path is not None:
            value = _read_credentials(self.user_path.parent / "credentials.toml").get(variable)
        if value:
            register_secret(value)
            return value
        if required:
            raise MissingKeyError(variable, provider)
        return None

    def __repr__(self) -> str:
        return f"Settings(user={self.user_path}, project={self.project_dir}, model={self.model!r})"


def _one_of(data: dict[str, Any], key: str, choices: tuple[str, ...]) -> str | None:
    value = data.get(key)
    if value is not None and value not in choices:
        raise ConfigError(
            f"settings: '{key}' is {value!r}; it takes {', '.join(map(repr, choices))}"
        )
    return value


def _tokens(data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value is not None and (type(value) is not int or value < 0):
        raise ConfigError(f"settings: '{key}' is {value!r}; give a number of tokens, 0 or more")
    return value


def _expect(data: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = data.get(key)
    if value is not None and not isinstance(value, kind):
        raise ConfigError(f"{where}: '{key}' must be a {kind.__name__}")
    return value


def _deep_merge(into: dict[str, Any], data: Mapping[str, Any]) -> None:
    for key, value in data.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _deep_merge(into[key], value)
        elif isinstance(value, Mapping):
            into[key] = {}
            _deep_merge(into[key], value)
        else:
            into[key] = value


def warn_settings(message: str) -> None:
    """A warning about the settings being read, pointing at the caller of the reader."""
    warn(message, stacklevel=3)


def _read_credentials(path: Path) -> dict[str, str]:
    """Keys from the user-only credentials file: a regular file, owned by the user, with
    no group or other permission bits; otherwise it is ignored with a warning."""
    if path in _credentials_cache:
        return _credentials_cache[path]
    keys: dict[str, str] = {}
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return keys
    except OSError:
        warn_settings(
            f"{path}: ignored the credentials file: it must be a regular file, not a link"
        )
        return keys
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            warn_settings(f"{path}: ignored the credentials file: not a regular file")
            return keys
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            warn_settings(f"{path}: ignored the credentials file: it is not owned by you")
            return keys
        if info.st_mode & 0o077:
            # Group or other bits: readable (or writable) by others.
            warn_settings(
                f"{path}: ignored the credentials file: its permissions let others read it; "
                f"run chmod 600 {path}"
            )
            return keys
        with os.fdopen(fd, "rb", closefd=False) as handle:
            try:
                data = tomllib.load(handle)
            except tomllib.TOMLDecodeError as exc:
                warn_settings(f"{path}: ignored the credentials file: invalid TOML ({exc})")
                return keys
    finally:
        os.close(fd)
    for name, value in data.items():
        if isinstance(value, str):
            keys[name] = value
            register_secret(value)
    _credentials_cache[path] = keys
    return keys
