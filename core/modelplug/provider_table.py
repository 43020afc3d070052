"""A provider plugin's side of the user's ``[providers.NAME]`` tables.

A provider type's plugin declares the names it serves (its built-in ones and the user's
providers of its type), builds the Endpoint of a user's provider with core's checks
applied once, and reads the keys its type takes beyond core's (``region``), typed::

    def modelplug_providers(settings):
        return declared_providers(settings, "acme", builtin=["acme"], options=AcmeTable)

    def modelplug_resolve(spec, settings, provider_type):
        endpoint = user_endpoint(settings, name, "acme", base_url="https://api.acme.dev/v1",
                                 api_key_env="ACME_API_KEY")

Nothing here imports anything heavy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeVar

from .errors import ConfigError
from .records import TableError, field_names, from_table
from .routes import Endpoint, Provider
from .settings import PROVIDER_KEYS, check_base_url, is_loopback_url, warn

if TYPE_CHECKING:
    from .settings import Settings

__all__ = ["check_provider_table", "declared_providers", "provider_options", "user_endpoint"]

R = TypeVar("R")


def declared_providers(
    settings: Settings,
    provider_type: str,
    builtin: Iterable[str] = (),
    *,
    native: bool = False,
    example: str | None = None,
    options: type | None = None,
) -> list[Provider]:
    """What ``modelplug_providers`` returns for one type: the ``builtin`` names and the
    user's providers of ``provider_type``, less the built-in names the user's file gave
    another type (the user's table replaces a built-in of the same name)."""
    names = set(builtin)
    names.update(n for n, p in settings.providers.items() if p.type == provider_type)
    names.difference_update(n for n, p in settings.providers.items() if p.type != provider_type)
    return [
        Provider(name=n, type=provider_type, native=native, example=example, options=options)
        for n in sorted(names)
    ]


def user_endpoint(
    settings: Settings,
    provider: str,
    provider_type: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    local: bool | None = None,
    server: str | None = None,
    servers: Iterable[str] | None = None,
    options: type | None = None,
) -> Endpoint | None:
    """The Endpoint of the user's ``[providers.NAME]`` of ``provider_type`` (None when
    the user's file has no such provider of this type).

    :param base_url: the type's default base URL, for a table without one.
    :param api_key_env: the type's default key variable, when the table names none
        (``api_key_env = ""`` in the table means "no key").
    :param local: whether the server is a free one on this machine; None: a keyless
        loopback address is local.
    :param server: the server kind when the table names none.
    :param servers: the ``server = "..."`` values the type knows (None: any).
    :param options: the dataclass of the type's own keys; read into ``Endpoint.options``.
    :raises ConfigError: no base URL at all, or a ``server`` the type does not know.
    """
    user = settings.providers.get(provider)
    if user is None or user.type != provider_type:
        return None
    url = user.base_url or base_url
    if not url:
        raise ConfigError(
            f"the provider {provider!r} in your settings has type {provider_type!r} but no "
            f'base_url; add base_url = "https://host/v1" under [providers.{provider}]'
        )
    url = check_base_url(url, allow_insecure_http=user.allow_insecure_http, provider=provider)
    key_env = user.api_key_env
    if key_env is None and "api_key_env" not in user.given:
        key_env = api_key_env
    kind = user.server or server
    known = None if servers is None else tuple(servers)
    if user.server is not None and known is not None and user.server not in known:
        raise ConfigError(
            f"[providers.{provider}] server = {user.server!r} is not a server the "
            f"{provider_type!r} type knows; use one of {', '.join(known)} (or leave it out)"
        )
    read = provider_options(settings, provider, options) if options is not None else None
    return Endpoint(
        type=provider_type,
        base_url=url,
        api_key_env=key_env or None,
        headers=dict(user.headers),
        allow_insecure_http=user.allow_insecure_http,
        local=(not key_env and is_loopback_url(url)) if local is None else local,
        server=kind,
        options={} if read is None else dataclasses.asdict(read),
    )


def provider_options(settings: Settings, provider: str, record: type[R]) -> R:
    """The keys of the user's ``[providers.NAME]`` beyond core's, as ``record`` (a
    dataclass whose fields are the keys and their defaults).

    :raises ConfigError: a value has the wrong kind, naming ``[providers.NAME] key``.
    """
    user = settings.providers.get(provider)
    extra = {} if user is None else user.extra
    known = set(field_names(record))
    try:
        return from_table(
            record, {k: v for k, v in extra.items() if k in known}, f"providers.{provider}"
        )
    except TableError as exc:
        key = exc.key.removeprefix(f"providers.{provider}.")
        raise ConfigError(f"[providers.{provider}] {key}: {exc.problem}") from None


def check_provider_table(settings: Settings, provider: str, declared: Provider | None) -> None:
    """Core's check when ``provider`` resolves: keys of the user's table that neither
    core nor the serving declaration knows are a warning (a typo must not be silent);
    a wrong value of a declared key is a ConfigError."""
    user = settings.providers.get(provider)
    if user is None or not user.extra:
        return
    record = declared.options if declared is not None else None
    own: list[str] = field_names(record) if record is not None else []
    unknown = sorted(k for k in user.extra if k not in own)
    if unknown:
        known = ", ".join([*sorted(PROVIDER_KEYS), *own])
        warn(
            f"[providers.{provider}] has unknown key(s) {', '.join(unknown)} for type "
            f"{user.type!r} (known: {known})",
            stacklevel=4,
        )
    if record is not None:
        provider_options(settings, provider, record)
