"""The providers this plugin serves (``ollama`` and the user's providers of type
``ollama``), where each one is reached, and turning a spec into a Route."""

from __future__ import annotations

import ipaddress

from modelplug import (
    ConfigError,
    Endpoint,
    ModelInfo,
    Provider,
    Route,
    Settings,
    check_base_url,
    declared_providers,
    user_endpoint,
)

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_CONTEXT_WINDOW",
    "TYPE",
    "endpoint_for",
    "normalize_host",
    "provider_names",
    "resolve",
]

TYPE = "ollama"
NAME = "ollama"
DEFAULT_BASE_URL = "http://localhost:11434"
DEFAULT_PORT = "11434"
# The window assumed (and sent as num_ctx) when neither settings nor a probe say more:
# the same default as openai-compat's local presets, so switching plugins changes
# nothing for compaction.
DEFAULT_CONTEXT_WINDOW = 32_768


def provider_names(settings: Settings) -> list[Provider]:
    """``ollama`` and the user's providers of this type, all native (Ollama's own API:
    ``ollama`` wins over openai-compat's preset of the same name). A user provider named
    ``ollama`` of another type takes the name away from this plugin."""
    return declared_providers(settings, TYPE, builtin=[NAME], native=True, example="qwen3:8b")


def normalize_host(value: str) -> str:
    """An ``OLLAMA_HOST`` value as the URL a client connects to, read the way Ollama
    reads it: ``host:port`` without a scheme is ``http://``; a host alone gets port
    11434 (80 or 443 when a scheme names one); the bind-all addresses ``0.0.0.0`` and
    ``::`` mean this machine. Raises ValueError for a value that is not a host."""
    text = value.strip().strip("\"'")
    scheme, sep, rest = text.partition("://")
    port = DEFAULT_PORT
    if not sep:
        scheme, rest = "http", text
        if text == "ollama.com":
            scheme, rest = "https", "ollama.com:443"
    elif scheme == "http":
        port = "80"
    elif scheme == "https":
        port = "443"
    else:
        raise ValueError(f"the scheme {scheme!r} is not http or https")
    hostport, _, path = rest.partition("/")
    host, port = _split_host_port(hostport, port)
    if not port.isdigit() or int(port) > 65535:
        raise ValueError("the port is not a number from 0 to 65535")
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    shown = f"[{host}]" if ":" in host else host
    url = f"{scheme}://{shown}:{port}"
    return f"{url}/{path}".rstrip("/") if path else url


def _split_host_port(hostport: str, default_port: str) -> tuple[str, str]:
    if hostport.startswith("["):
        host, _, tail = hostport[1:].partition("]")
        return host, tail[1:] if tail.startswith(":") else default_port
    if hostport.count(":") > 1:
        # A bare IPv6 address has no port of its own.
        ipaddress.ip_address(hostport)
        return hostport, default_port
    host, sep, port = hostport.partition(":")
    return host, port if sep else default_port


def _default_base_url(settings: Settings, provider: str) -> str:
    """The base URL of a provider the user's file does not place: ``OLLAMA_HOST`` from
    the user's environment (the environment is the user's own, like their settings
    file; a project file can never set it), else the default."""
    value = settings.getenv("OLLAMA_HOST")
    if not value or not value.strip():
        return DEFAULT_BASE_URL
    try:
        url = normalize_host(value)
    except ValueError as exc:
        raise ConfigError(
            f"OLLAMA_HOST in your environment is not a host Ollama could listen on ({exc}); "
            "set it like 127.0.0.1:11434 or http://host:11434"
        ) from None
    user = settings.providers.get(provider)
    allow = user.allow_insecure_http if user is not None else False
    try:
        return check_base_url(url, allow_insecure_http=allow, provider=provider)
    except ConfigError:
        raise ConfigError(
            f"OLLAMA_HOST points at {url}: plain http beyond this machine is refused "
            f"by default. To use it anyway, add [providers.{provider}] with "
            f'type = "{TYPE}", base_url = "{url}" and allow_insecure_http = true '
            "to your own settings file"
        ) from None


def endpoint_for(provider: str, settings: Settings) -> Endpoint | None:
    """The endpoint of ``provider``, or None when this plugin does not serve it. No key
    by default (a hosted Ollama behind a proxy names one); local by core's rule."""
    user = settings.providers.get(provider)
    if (user.type != TYPE) if user is not None else (provider != NAME):
        return None  # before OLLAMA_HOST is read: another plugin's provider
    placed = user is not None and user.base_url
    return user_endpoint(
        settings,
        provider,
        TYPE,
        builtin=provider == NAME,
        base_url=None if placed else _default_base_url(settings, provider),
        server="ollama",
        servers=["ollama"],
    )


def resolve(spec: str, settings: Settings, provider_type: str | None) -> Route | None:
    """``provider/model`` -> Route, split at the first ``/`` (a model id may hold ``/``
    too: ``ollama/hf.co/org/model:Q4``)."""
    provider, _, model = spec.partition("/")
    # A spec naming no model never comes here: core refuses it first.
    endpoint = endpoint_for(provider, settings) if provider_type in (None, TYPE) else None
    if endpoint is None or not model:
        return None
    # Ollama's ``format`` takes a JSON schema for every model it serves.
    info = ModelInfo(structured_output="native")
    known = settings.model_settings(provider, model)
    if known is None or known.context_window is None:
        info.context_window = DEFAULT_CONTEXT_WINDOW
        info.notes.append(
            f"{provider}/{model} has no context_window entry; assuming "
            f"{DEFAULT_CONTEXT_WINDOW:,} tokens and sending num_ctx {DEFAULT_CONTEXT_WINDOW} "
            "so that Ollama loads that much (capped at what the model was trained for, or "
            "the model's own num_ctx, once probed). Set context_window under "
            f'[models."{provider}/{model}"], or run `modelplug resolve --probe` to ask the '
            "server."
        )
    return Route(provider=provider, model=model, endpoint=endpoint, info=info)
